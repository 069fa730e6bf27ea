import { nemeses } from '../../../nemeses/registry.ts';
import { stepBehaviour, substituteRow } from '../../../nemeses/substitutes.ts';
import type { NemesisStep } from '../../../nemeses/types.ts';
import { runDoctor } from '../../core/control/node-doctor.ts';
import { shellQuote } from '../../core/control/quote.ts';
import type { Remote } from '../../core/control/types.ts';
import { errorMessage } from '../../core/util/errors.ts';
import type { Plan } from '../plan/schema.ts';
import { PLAN_BINARY_NOT_RUN } from '../plugin/trust.ts';
import type { CapabilityRow } from '../report/types.ts';

/**
 * The capability probe (spec §7 item 3): what the plan needs (its §6b table plus what each scenario's
 * nemeses need), the operator's answers (asked on a terminal, or `--skip` / `--assume` in CI), then a
 * probe of every node (the `doctor` probes, plus `command -v` for anything else), reconciled into the
 * session log's `Requirement | Present? | Version | Source` matrix. A need that stays missing names the
 * scenarios it makes INCONCLUSIVE-env; nothing is skipped silently.
 */
export interface Need {
  name: string;
  versionFloor: string;
  /** Scenario ids (top level) that need it. */
  usedBy: string[];
  installHint: string;
  /** Where the need came from: the plan's §6b table, or a nemesis a scenario's binding uses. */
  origin: '§6b' | 'nemesis';
  /** A §6b row that a scenario's nemesis needs too: faultline's own code names its binary as well. */
  alsoNemesis?: boolean;
  broughtUpBySut: boolean;
  /** The fault behaviours (`packet delay` …) the scenarios using it ask for: what a substitute must reproduce. */
  asks: string[];
}

/** What a nemesis step needs on the nodes: the step's own needs, else its action's (nemesis registry). */
function nemesisNeeds(step: NemesisStep): readonly { name: string; hint: string }[] {
  const def = nemeses.get(step.kind);
  const own = def?.stepNodeNeeds?.(step);
  if (own) return own;
  const a = def?.actions.find((x) => x.name === (step.action ?? 'start')) ?? def?.actions[0];
  return a?.nodeNeeds ?? [];
}

const norm = (s: string) => s.trim().toLowerCase();

/** Every need of the scenarios selected, §6b first, then the nemeses' (merged by name). */
export function needsOf(plan: Plan, scenarioIds: readonly string[]): Need[] {
  const wanted = new Set(scenarioIds);
  const out = new Map<string, Need>();
  for (const r of plan.environment) {
    const usedBy = r.usedBy.filter((s) => wanted.has(s.split('/')[0] as string));
    if (usedBy.length === 0) continue;
    out.set(norm(r.requirement), {
      name: r.requirement,
      versionFloor: r.versionFloor,
      usedBy,
      installHint: r.installHint,
      origin: '§6b',
      broughtUpBySut: r.broughtUpBySut,
      asks: [],
    });
  }
  const asksOf = new Map<string, string[]>();
  for (const sc of plan.resolved) {
    if (sc.parentId !== null || !wanted.has(sc.id) || !sc.binding) continue;
    asksOf.set(sc.id, sc.binding.nemesis.map(stepBehaviour));
    for (const step of sc.binding.nemesis) {
      for (const n of nemesisNeeds(step)) {
        const hit = [...out.values()].find((x) => probeKey(x.name) === probeKey(n.name));
        if (hit) {
          if (!hit.usedBy.includes(sc.id)) hit.usedBy.push(sc.id);
          if (hit.origin !== 'nemesis') hit.alsoNemesis = true;
          continue;
        }
        out.set(norm(n.name), {
          name: n.name,
          versionFloor: '',
          usedBy: [sc.id],
          installHint: n.hint,
          origin: 'nemesis',
          broughtUpBySut: false,
          asks: [],
        });
      }
    }
  }
  for (const need of out.values())
    need.asks = [...new Set(need.usedBy.flatMap((id) => asksOf.get(id.split('/')[0] as string) ?? []))];
  return [...out.values()];
}

/** Which probe answers a requirement: a doctor item, a SUT binary, or `command -v <word>`. */
export function probeKey(requirement: string): string {
  const r = norm(requirement);
  if (/iptables/.test(r)) return 'doctor:iptables';
  if (/netem/.test(r)) return 'doctor:netem';
  if (/faketime/.test(r)) return 'doctor:libfaketime';
  if (/dm-flakey|device-mapper|dmsetup/.test(r)) return 'doctor:dm-flakey';
  if (/\bfuse\b/.test(r)) return 'doctor:fuse';
  if (/\betcd\b/.test(r)) return 'bin:etcd';
  if (/\bredis\b/.test(r)) return 'bin:redis-server';
  // Binaries may carry underscores (pg_ctlcluster, mysql_install_db).
  const word = r.match(/^[a-z0-9][\w.+-]*/)?.[0];
  return word ? `bin:${word}` : `unknown:${r}`;
}

export interface ProbeAnswer {
  present: boolean | null;
  version: string;
  source: string;
  fix?: string;
}

/** Seconds a binary gets to answer `--version` before it and everything it started are killed. */
export const VERSION_PROBE_LIMIT_S = 5;

/**
 * The node-side probe of one binary: its path, and (when `askVersion`) the first line of its
 * `--version`. A daemon without that option (Debian's `rabbitmq-server`) starts instead of answering, so
 * the call runs under `timeout -s KILL`, which kills the whole process group it started, with no input.
 * `command -v` is the shell's own lookup: finding a binary runs nothing.
 */
export function binaryProbeScript(bin: string, askVersion: boolean): string {
  const found = `p=$(command -v ${shellQuote(bin)} || true); if [ -n "$p" ]; then echo "path=$p"`;
  if (!askVersion) return `${found}; fi`;
  const version = `if command -v timeout >/dev/null 2>&1; then timeout -s KILL ${VERSION_PROBE_LIMIT_S} "$p" --version; else "$p" --version; fi </dev/null 2>/dev/null | head -1`;
  return `${found}; echo "version=$(${version})"; fi`;
}

/** The binaries faultline itself names for a requirement ({@link probeKey}): the built-in databases'. */
const OWN_BINARIES: ReadonlySet<string> = new Set(['bin:etcd', 'bin:redis-server']);

/**
 * Whether the probe may run a binary with `--version`. Running a binary is running code, so a binary
 * only the plan names (a §6b row, data from whoever wrote the plan) is looked up but not run unless the
 * operator passed `--trust-plan-commands`; one that faultline's own code names (a built-in database, a
 * nemesis's need) is asked for its version always.
 */
export function mayAskVersion(key: string, needs: readonly Need[], trustPlanCommands: boolean): boolean {
  if (trustPlanCommands || OWN_BINARIES.has(key)) return true;
  return needs.some((n) => (n.origin === 'nemesis' || n.alsoNemesis === true) && probeKey(n.name) === key);
}

export interface ProbeOptions {
  /** `run --trust-plan-commands`: binaries only the plan names are asked for `--version` too. */
  trustPlanCommands?: boolean;
}

/** Probe every node for each need; present only when present on every node. */
export async function probeNeeds(
  remote: Remote,
  needs: readonly Need[],
  o: ProbeOptions = {},
): Promise<Map<string, ProbeAnswer>> {
  const out = new Map<string, ProbeAnswer>();
  const nodes = remote.nodes.map((n) => n.name);
  const keys = [...new Set(needs.map((n) => probeKey(n.name)))];
  const doctor = keys.some((k) => k.startsWith('doctor:')) ? await runDoctor(remote) : null;
  for (const key of keys) {
    if (key.startsWith('doctor:') && doctor) {
      const item = key.slice('doctor:'.length);
      const checks = doctor.nodes.map((n) => ({ node: n.node, c: n.checks.find((c) => c.item === item) }));
      const missing = checks.filter((x) => x.c?.status === 'missing');
      const unknown = checks.filter((x) => !x.c || x.c.status === 'unknown');
      const first = checks.find((x) => x.c?.status === 'ok')?.c;
      out.set(key, {
        present: missing.length > 0 ? false : unknown.length > 0 ? null : true,
        version: first?.value ?? '—',
        source:
          missing.length > 0
            ? `doctor probe: missing on ${missing.map((m) => m.node).join(', ')}${missing[0]?.c?.detail ? ` (${missing[0].c.detail})` : ''}`
            : unknown.length > 0
              ? `doctor probe: undetermined on ${unknown.map((m) => m.node).join(', ')}`
              : `doctor probe on ${nodes.length} node(s)${first?.detail ? `: ${first.detail}` : ''}`,
        ...(missing[0]?.c?.fix && { fix: missing[0].c.fix }),
      });
      continue;
    }
    if (key.startsWith('bin:')) {
      const bin = key.slice(4);
      const askVersion = mayAskVersion(key, needs, o.trustPlanCommands === true);
      const script = binaryProbeScript(bin, askVersion);
      const results = await remote.onNodes(
        nodes,
        async (n) => (await remote.exec(n, script, { timeoutMs: 15_000 })).stdout,
      );
      const found = results.filter((r) => r.ok && /path=/.test(r.value ?? ''));
      const failed = results.filter((r) => !r.ok);
      // Nothing found, nothing to ask: a missing binary reads as before.
      const notAsked = !askVersion && found.length > 0;
      const version = notAsked ? 'not asked' : /version=(.*)/.exec(found[0]?.value ?? '')?.[1]?.trim() || '—';
      const why = notAsked ? `; its --version not run: ${PLAN_BINARY_NOT_RUN}` : '';
      out.set(key, {
        present: failed.length > 0 ? null : found.length === nodes.length,
        version,
        source:
          failed.length > 0
            ? `command -v ${bin}: probe failed on ${failed.map((f) => `${f.node} (${errorMessage(f.error)})`).join(', ')}`
            : found.length === nodes.length
              ? `command -v ${bin} on ${nodes.length} node(s)${why}`
              : `command -v ${bin}: missing on ${results
                  .filter((r) => !/path=/.test(r.value ?? ''))
                  .map((r) => r.node)
                  .join(', ')}`,
      });
      continue;
    }
    out.set(key, { present: null, version: '—', source: 'no probe for this requirement' });
  }
  return out;
}

export interface OperatorAnswers {
  /** Needs the operator says are unavailable or to be skipped. */
  skip: ReadonlySet<string>;
  /** Needs the operator vouches for (used when the probe cannot decide). */
  assume: ReadonlySet<string>;
}

export interface ReconciledNeed {
  need: Need;
  present: boolean;
  row: CapabilityRow;
  /** Install command when missing and trivially installable (rebuilt from validated package names). */
  install: string | null;
  /** Its packages (Debian names): `--install` maps them to each node's package family. */
  packages: string[];
  /** Why a missing need's install hint will not be run (not the allowed `apt-get install` form). */
  installRefused: string | null;
  substitute: string | null;
}

/**
 * The substitute for a missing need, when one reproduces every behaviour the scenarios using it ask
 * for (nemeses/substitutes.ts): a need whose asked behaviours include one with no substitute (a netem
 * delay) gets none, and the row says which behaviour and why, so the scenario is INCONCLUSIVE-env
 * naming the missing capability instead of running a fault that cannot land.
 */
function substituteFor(
  need: Need,
  probed: ReadonlyMap<string, ProbeAnswer>,
): { text: string } | { refused: string } {
  const key = probeKey(need.name);
  const rows = need.asks.map(substituteRow).filter((r) => r !== undefined && r.probe === key);
  if (rows.length === 0) return { refused: 'no documented substitute' };
  const none = rows.find((r) => !r?.substitute);
  if (none) return { refused: `no substitute reproduces ${none.behaviour}: ${none.noSubstitute}` };
  const absent = rows.find((r) => r?.substitute?.probe && !probed.get(r.substitute.probe)?.present);
  if (absent)
    return {
      refused: `the substitute for ${absent.behaviour} needs ${absent.substitute?.needs}, missing too`,
    };
  return { text: rows.map((r) => `${r?.behaviour}: ${r?.substitute?.applied}`).join('; ') };
}

/** A Debian package name (policy §5.6.1), optionally with an architecture qualifier. */
/**
 * A Debian package name. apt reads a trailing `-` as "remove" and `+` as "install", and a word with
 * `.+` / `.` followed by a regex quantifier as a pattern: none of those is a name.
 */
const PACKAGE_NAME = /^(?!.*\.\+)[a-z0-9][a-z0-9+.-]*[a-z0-9](?::[a-z0-9-]+)?$/;

/**
 * The only install hint faultline runs: exactly `apt-get install [-y] PKG…` with package-name-shaped words
 * (hints name Debian packages; `--install` maps them to each node's own package family).
 * The command is rebuilt from the validated names, so nothing of the hint's text reaches the shell.
 * null for a hint that does not try to install anything (free text for the operator); `refused` with the
 * reason for an install-looking hint in any other form (other tools, options, `;`, `|`, `$(…)`, …).
 */
export function parseInstallHint(
  hint: string,
): { command: string; packages: string[] } | { refused: string } | null {
  const words = hint.trim().split(/\s+/);
  if (!/^(apt-get|apt|dnf|yum|sudo|pip3?|npm)$/.test(words[0] ?? '') || !/\binstall\b/.test(hint))
    return null;
  if (words[0] !== 'apt-get' || words[1] !== 'install')
    return { refused: `only "apt-get install [-y] PACKAGE…" is run, not ${JSON.stringify(hint.trim())}` };
  const packages = words.slice(words[2] === '-y' ? 3 : 2);
  if (packages.length === 0) return { refused: 'names no package' };
  const bad = packages.find((w) => !PACKAGE_NAME.test(w));
  if (bad !== undefined)
    return { refused: `${JSON.stringify(bad)} is not a package name (only a-z 0-9 + . - are run)` };
  return { command: `apt-get install -y ${packages.join(' ')}`, packages };
}

/** Operator answers + probe → the matrix rows, with the install command or substitute where one exists. */
export function reconcile(
  needs: readonly Need[],
  probed: ReadonlyMap<string, ProbeAnswer>,
  answers: OperatorAnswers,
  onMissing: 'inconclusive' | 'substitute' | 'wait',
): ReconciledNeed[] {
  const named = (set: ReadonlySet<string>, n: Need) =>
    [...set].some((s) => norm(s) === norm(n.name) || probeKey(s) === probeKey(n.name));
  return needs.map((need) => {
    const key = probeKey(need.name);
    const p = probed.get(key) ?? { present: null, version: '—', source: 'not probed' };
    let present: boolean;
    let source: string;
    if (named(answers.skip, need)) {
      present = false;
      source = `skipped by the operator${p.present ? ` (the probe found it: ${p.source})` : ''}`;
    } else if (p.present === null) {
      present = named(answers.assume, need) || need.broughtUpBySut;
      source = present
        ? `${need.broughtUpBySut ? 'brought up by the SUT' : 'assumed by the operator (--assume)'}; ${p.source}`
        : `${p.source}; not confirmed (use --assume ${need.name} if it is there)`;
    } else {
      present = p.present;
      source = p.source;
      if (!present && named(answers.assume, need)) source += '; the operator assumed it, the probe overrides';
    }
    const hint = p.fix ?? need.installHint;
    const parsed = present ? null : parseInstallHint(hint);
    const install = parsed && 'command' in parsed ? parsed.command : null;
    const packages = parsed && 'packages' in parsed ? parsed.packages : [];
    const installRefused = parsed && 'refused' in parsed ? parsed.refused : null;
    let substitute: string | null = null;
    if (!present && onMissing === 'substitute') {
      const sub = substituteFor(need, probed);
      if ('text' in sub) {
        substitute = sub.text;
        present = true;
        source = `substitute: ${sub.text} (${source})`;
      } else source += `; ${sub.refused}`;
    }
    if (!present && install) source += `; install: ${install}`;
    if (!present && installRefused) source += `; install hint not run: ${installRefused}`;
    return {
      need,
      present,
      row: { requirement: need.name, present, version: p.version, source },
      install,
      packages,
      installRefused,
      substitute,
    };
  });
}

/** The missing needs of one scenario (top-level id), with the reason, for INCONCLUSIVE-env. */
export function missingFor(
  scenarioId: string,
  reconciled: readonly ReconciledNeed[],
): { name: string; reason: string }[] {
  const parent = scenarioId.split('/')[0] as string;
  return reconciled
    .filter((r) => !r.present && !r.need.broughtUpBySut && r.need.usedBy.includes(parent))
    .map((r) => ({ name: r.need.name, reason: r.row.source }));
}
