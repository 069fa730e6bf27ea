import { shellQuote } from '../src/core/control/quote.ts';
import type { NodeSpec, Remote } from '../src/core/control/types.ts';
import { Rng } from '../src/core/generator/rng.ts';
import {
  type Affectability,
  type BinaryReport,
  binaryReportCommand,
  faketimeAffectability,
  faketimeProbeCommand,
  offsetSpec,
  parseBinaryReport,
  parseDbTimeMs,
  parseProbeOffsetMs,
  wrapperScript,
} from './commands/faketime.ts';
import {
  bumpClockScript,
  parseStoppedNtp,
  restoreNtpScript,
  stopNtpScript,
  strobeLoopScript,
} from './commands/settime.ts';
import { landingEvidence, shownAt } from './landing.ts';
import { listMarkersCommand, nodeStateDir, parseMarkers, writeMarkerCommand } from './node-state.ts';
import { CLOCK_ACTIONS } from './params.ts';
import { substitutionFor } from './substitutes.ts';
import {
  type Capability,
  CapabilityMissingError,
  type CleanReport,
  type EvidenceSignal,
  type FaultEvidence,
  type FaultRecord,
  type InjectOptions,
  type Nemesis,
} from './types.ts';

/**
 * Clock faults, two ways.
 *
 * faketime (params.mode 'faketime', or any of rcFile/binary given): the DB runs through a wrapper
 * (installFaketimeWrapper) preloading libfaketime with its own offset file; bump / strobe / reset rewrite
 * the file. Evidence: the victim's own clock (a probe under the same preload) and the DB's own time
 * (params.timeCommand, e.g. `redis-cli -p 6379 TIME`). A binary libfaketime cannot affect (Go, static)
 * is reported as not landed, with the reason.
 *
 * settime (params.mode 'settime', the default otherwise): moves the node's kernel clock with NTP stopped
 * for the test and restored at heal; evidence is the node's offset against the control node. Refused on
 * nodes that share the control host's kernel clock (local-cluster nodes: `sharedKernelClock: true`).
 *
 * Actions: bump (deltaMs), strobe (deltaMs, periodMs, durationMs), scramble (each target its own offset
 * drawn uniformly from [-deltaMs, +deltaMs] by params.seed, as Jepsen's scramble-clock), reset.
 * params.toleranceMs (default 250).
 */

const FAKETIME_AREA = 'faketime';
const STROBE_AREA = 'strobe';
const SETTIME_AREA = 'settime';

/**
 * scramble: each node its own offset in [-deltaMs, +deltaMs] (never 0, so every node moves), drawn from
 * a seed (a number, or the fault id), so a replay scrambles the same way. null for other actions.
 */
export function scrambleOffsets(
  action: string,
  nodes: readonly string[],
  deltaMs: number,
  seed: number | string,
): Record<string, number> | null {
  if (action !== 'scramble') return null;
  let h = 2166136261;
  for (const c of String(seed)) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  const rng = new Rng(h >>> 0);
  const span = Math.abs(deltaMs);
  return Object.fromEntries(
    nodes.map((n) => {
      const v = Math.round((rng.next() * 2 - 1) * span);
      return [n, v === 0 ? span : v];
    }),
  );
}

interface NodeUndo {
  rcFile?: string;
  previous?: string;
  written?: string;
  strobePidMarker?: string;
  ntp?: { services: string[]; timedatectlNtp: boolean };
  offsetBeforeMs?: number;
  /** Half the round trip of that measurement: its error bound. */
  offsetBeforeErrorMs?: number;
  /** settime: the node's clock (minus the control's) the injecting command printed, and its error bound. */
  setOffsetMs?: number;
  setErrorMs?: number;
  /** settime: half the round trip of the DB time read before the fault. */
  dbBeforeErrorMs?: number;
  probeBeforeMs?: number | null;
  dbBeforeMs?: number | null;
  affectability?: Affectability;
  /** scramble: this node's own offset (the others' differ). */
  deltaMs?: number;
}

interface ClockUndo extends Record<string, unknown> {
  mode: 'faketime' | 'settime';
  action: string;
  deltaMs: number;
  perNode: Record<string, NodeUndo>;
}

export function faketimeFileFor(spec: NodeSpec, name: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(name)) throw new Error(`faketime name not usable in a path: ${name}`);
  return `${nodeStateDir(spec, FAKETIME_AREA)}/${name}.rc`;
}

export async function binaryReport(remote: Remote, node: string, binary: string): Promise<BinaryReport> {
  const r = await remote.exec(node, binaryReportCommand(binary), { check: false });
  return parseBinaryReport(binary, r.stdout);
}

export interface FaketimeWrapper {
  wrapperPath: string;
  rcFile: string;
  report: BinaryReport;
  affectability: Affectability;
}

/**
 * Write the wrapper that starts `binary` under libfaketime and its offset file ("+0"). Start the DB
 * with the wrapper path instead of the binary. Returns whether libfaketime can affect this binary at all.
 */
export async function installFaketimeWrapper(
  remote: Remote,
  node: string,
  opts: { binary: string; name: string; wrapperPath?: string },
): Promise<FaketimeWrapper> {
  const report = await binaryReport(remote, node, opts.binary);
  const affectability = faketimeAffectability(report);
  const rcFile = faketimeFileFor(remote.node(node), opts.name);
  const wrapperPath =
    opts.wrapperPath ?? `${nodeStateDir(remote.node(node), FAKETIME_AREA)}/${opts.name}.wrapper`;
  const dir = nodeStateDir(remote.node(node), FAKETIME_AREA);
  const script = report.lib
    ? wrapperScript(opts.binary, report.lib, rcFile, affectability.mallocShim)
    : `#!/bin/sh\nexec ${shellQuote(opts.binary)} "$@"\n`;
  await remote.exec(
    node,
    `mkdir -p ${shellQuote(dir)} && printf '%s\\n' +0 > ${shellQuote(rcFile)} && cat > ${shellQuote(wrapperPath)} && chmod 755 ${shellQuote(wrapperPath)}`,
    { sudo: true, stdin: script },
  );
  return { wrapperPath, rcFile, report, affectability };
}

function modeOf(params: Record<string, unknown>): 'faketime' | 'settime' {
  if (params.mode === 'faketime' || params.mode === 'settime') return params.mode;
  return params.rcFile || params.binary || params.name ? 'faketime' : 'settime';
}

function targetsOf(spec: { targets?: string | string[] }, remote: Remote): string[] {
  if (Array.isArray(spec.targets)) return spec.targets;
  if (typeof spec.targets === 'string' && remote.nodes.some((n) => n.name === spec.targets))
    return [spec.targets];
  if (spec.targets === undefined || spec.targets === 'all') return remote.nodes.map((n) => n.name);
  throw new Error('clock faults need resolved target nodes (a node name or list)');
}

function rcFileOf(spec: NodeSpec, params: Record<string, unknown>): string {
  const node = spec.name;
  const byNode = params.rcFiles as Record<string, string> | undefined;
  if (byNode?.[node]) return byNode[node];
  if (typeof params.rcFile === 'string') return params.rcFile;
  if (typeof params.name === 'string') return faketimeFileFor(spec, params.name);
  throw new Error(
    `${node}: faketime clock faults need params.rcFile or params.name (the wrapper's offset file)`,
  );
}

async function readText(remote: Remote, node: string, path: string): Promise<string> {
  return (
    await remote.exec(node, `cat ${shellQuote(path)} 2>/dev/null`, { sudo: true, check: false })
  ).stdout.trim();
}

async function writeRc(remote: Remote, node: string, path: string, content: string): Promise<void> {
  // Written to a temp file and renamed: libfaketime never reads a half-written offset.
  await remote.exec(
    node,
    `mkdir -p "$(dirname ${shellQuote(path)})" && printf '%s\\n' ${shellQuote(content)} > ${shellQuote(`${path}.tmp`)} && mv ${shellQuote(`${path}.tmp`)} ${shellQuote(path)}`,
    { sudo: true },
  );
}

async function probeOffset(
  remote: Remote,
  node: string,
  lib: string,
  rcFile: string,
): Promise<number | null> {
  const r = await remote.exec(node, faketimeProbeCommand(lib, rcFile), { check: false });
  return parseProbeOffsetMs(r.stdout);
}

/** The DB's own clock minus the node's plain clock, in ms (midpoint of two plain reads around it). */
async function dbOffset(remote: Remote, node: string, timeCommand: string): Promise<number | null> {
  const r = await remote.exec(
    node,
    `a=$(date +%s.%N); out=$(${timeCommand} 2>&1 | tr '\\n' ' '); c=$(date +%s.%N); echo "$a|$out|$c"`,
    { check: false, timeoutMs: 10_000 },
  );
  const [a, out, c] = r.stdout.trim().split('|');
  const db = parseDbTimeMs(out ?? '');
  if (db === null || !a || !c) return null;
  return Math.round(db - ((Number(a) + Number(c)) / 2) * 1000);
}

/**
 * The DB's own clock minus the control node's, in ms, and the resolution of the DB's answer (an HTTP
 * Date header, say, only tells whole seconds): settime moves the node's kernel clock, so the DB's time
 * is judged against the control node, not against the node's own clock.
 */
async function dbControlOffset(
  remote: Remote,
  node: string,
  timeCommand: string,
): Promise<{ offsetMs: number; resolutionMs: number; errorMs: number } | null> {
  const t0 = Date.now();
  // A DB that does not answer is evidence missing, not a failed fault: null, and the signal says so.
  const r = await remote.exec(node, timeCommand, { check: false, timeoutMs: 30_000 }).catch(() => null);
  const t1 = Date.now();
  if (!r) return null;
  const db = parseDbTimeMs(r.stdout.replace(/\n/g, ' '));
  if (db === null) return null;
  const wholeSeconds = Number.isInteger(db / 1000) && !/\d\s+\d/.test(r.stdout.trim());
  return {
    offsetMs: Math.round(db - (t0 + t1) / 2),
    resolutionMs: wholeSeconds ? 1000 : 0,
    // The DB answered somewhere inside the round trip: half of it bounds the midpoint's error.
    errorMs: Math.ceil((t1 - t0) / 2),
  };
}

/**
 * Bring a node's kernel clock back to the control node's: measure the offset, shift by its opposite,
 * measure again (at most three rounds). Relative shifts, so the command's own latency is not added to
 * the clock, as setting an absolute time sent from here would. Returns the last offset measured.
 */
export async function alignClock(remote: Remote, node: string, tolMs = 50): Promise<number> {
  let m = await measureOffset(remote, node);
  for (let i = 0; i < 6 && Math.abs(m.offsetMs) > tolMs; i++) {
    if (Math.abs(m.offsetMs) > m.errorMs) {
      await remote.exec(node, bumpClockScript(-m.offsetMs), { sudo: true });
      m = await measureOffset(remote, node);
      continue;
    }
    // The offset is within the measurement's error (a slow node: seconds per round trip). Look for a
    // shorter round trip before deciding the clock is aligned; stop when none comes.
    const finer = await measureOffset(remote, node, 6);
    if (finer.errorMs >= m.errorMs) break;
    m = finer;
  }
  return m.offsetMs;
}

/**
 * Node clock minus control clock in ms: the midpoint of the round trip with the shortest of `samples`
 * round trips (NTP's clock filter: the shorter the trip, the less its asymmetry can skew the midpoint;
 * an emulated node can take a second to answer, mostly on the way back). `errorMs` bounds the error:
 * the node read its clock somewhere inside that round trip, so the midpoint is off by at most half of it.
 */
export async function measureOffset(
  remote: Remote,
  node: string,
  samples = 3,
): Promise<{ offsetMs: number; errorMs: number }> {
  let best: { rtt: number; offset: number } | null = null;
  for (let i = 0; i < samples; i++) {
    const t0 = Date.now();
    const r = await remote.exec(node, 'date +%s.%N');
    const t1 = Date.now();
    const offset = Math.round(Number(r.stdout.trim()) * 1000 - (t0 + t1) / 2);
    if (!best || t1 - t0 < best.rtt) best = { rtt: t1 - t0, offset };
  }
  const b = best as { rtt: number; offset: number };
  return { offsetMs: b.offset, errorMs: Math.ceil(b.rtt / 2) };
}

export async function controlOffset(remote: Remote, node: string): Promise<number> {
  return (await measureOffset(remote, node)).offsetMs;
}

function within(measured: number | null | undefined, expected: number, tol: number): boolean {
  return typeof measured === 'number' && Math.abs(measured - expected) <= tol;
}

/**
 * The injector's side of a settime fault: what the command that moved the clock saw. A bump prints the
 * clock right after `date -s` (judged against the control clock, within that round trip); a reset is
 * the offset the alignment ended at; a strobe is its loop, alive.
 */
async function settimeInjectorSignal(
  remote: Remote,
  id: string,
  action: string,
  node: string,
  u: NodeUndo,
  expected: number,
  tol: number,
): Promise<EvidenceSignal> {
  if (action === 'strobe') {
    const f = shellQuote(`${nodeStateDir(remote.node(node), STROBE_AREA)}/${id}`);
    const r = await remote.exec(
      node,
      `p=$(cat ${f} 2>/dev/null) && kill -0 "$p" 2>/dev/null && echo "alive $p"`,
      {
        sudo: true,
        check: false,
      },
    );
    return {
      side: 'injector',
      node,
      signal: 'strobe loop process (its pid file)',
      during: r.stdout.trim() || 'not running',
      landed: r.stdout.startsWith('alive'),
    };
  }
  const slack = tol + (u.setErrorMs ?? 0) + (action === 'bump' ? (u.offsetBeforeErrorMs ?? 0) : 0);
  const shift = action === 'bump' ? (u.setOffsetMs ?? Number.NaN) - (u.offsetBeforeMs ?? 0) : u.setOffsetMs;
  return {
    side: 'injector',
    node,
    signal:
      action === 'bump'
        ? 'clock printed right after `date -s` − control clock (ms)'
        : 'clock − control clock after alignment (ms)',
    before: u.offsetBeforeMs,
    during: u.setOffsetMs,
    landed: within(shift, expected, slack),
    note: `tolerance ±${slack} ms`,
  };
}

export const clockNemesis: Nemesis & { kind: 'clock' } = {
  kind: 'clock',

  async capabilities(remote, node): Promise<Capability[]> {
    const spec = remote.node(node);
    const r = await remote.exec(node, binaryReportCommand('/bin/true'), { check: false });
    const rep = parseBinaryReport('/bin/true', r.stdout);
    return [
      {
        name: 'faketime',
        available: rep.lib !== undefined,
        ...(!rep.lib && { reason: 'libfaketime is not installed (apt-get install -y libfaketime)' }),
      },
      {
        name: 'settime',
        available: !spec.sharedKernelClock,
        ...(spec.sharedKernelClock && {
          reason:
            "the node shares the control host's kernel clock (local-cluster node): setting it would move every node's clock and the control node's; use faketime",
          substitute: 'faketime',
        }),
      },
    ];
  },

  async inject(remote, spec, id, opts?: InjectOptions): Promise<FaultRecord> {
    const p = spec.params ?? {};
    const mode = modeOf(p);
    const action = spec.action;
    if (!(CLOCK_ACTIONS as readonly string[]).includes(action))
      throw new Error(`clock: unknown action "${action}" (expected ${CLOCK_ACTIONS.join(', ')})`);
    const nodes = targetsOf(spec, remote);
    const deltaMs = action === 'reset' ? 0 : Math.round(Number(p.deltaMs ?? 0));
    if (action !== 'reset' && (!Number.isFinite(deltaMs) || deltaMs === 0))
      throw new Error(`clock: ${action} needs a non-zero params.deltaMs`);
    const offsets = scrambleOffsets(action, nodes, deltaMs, typeof p.seed === 'number' ? p.seed : id);
    if (mode === 'settime')
      for (const n of nodes)
        if (remote.node(n).sharedKernelClock)
          throw new CapabilityMissingError(
            n,
            'settime',
            "the node shares the control host's kernel clock (local-cluster node); setting it would move every node's and the control node's clock. Use params.mode 'faketime' with a faketime wrapper",
          );
    const perNode: Record<string, NodeUndo> = {};
    const timeCommand = typeof p.timeCommand === 'string' ? p.timeCommand : undefined;
    await Promise.all(
      nodes.map(async (node) => {
        const u: NodeUndo = offsets ? { deltaMs: offsets[node] as number } : {};
        perNode[node] = u;
        if (mode === 'faketime') {
          u.rcFile = rcFileOf(remote.node(node), p);
          u.previous = (await readText(remote, node, u.rcFile)) || '+0';
          const rep = await binaryReport(remote, node, typeof p.binary === 'string' ? p.binary : '/bin/true');
          u.affectability = faketimeAffectability(rep);
          if (!rep.lib) throw new CapabilityMissingError(node, 'faketime', 'libfaketime is not installed');
          u.probeBeforeMs = await probeOffset(remote, node, rep.lib, u.rcFile);
          if (timeCommand) u.dbBeforeMs = await dbOffset(remote, node, timeCommand);
        } else {
          const m = await measureOffset(remote, node);
          u.offsetBeforeMs = m.offsetMs;
          u.offsetBeforeErrorMs = m.errorMs;
          if (timeCommand) {
            const db = await dbControlOffset(remote, node, timeCommand);
            u.dbBeforeMs = db?.offsetMs ?? null;
            u.dbBeforeErrorMs = db?.errorMs ?? 0;
          }
        }
      }),
    );
    const undo: ClockUndo = { mode, action, deltaMs, perNode };
    // On a node sharing the control host's kernel clock, settime cannot be asked: faketime stands in.
    const shared = mode === 'faketime' && nodes.some((n) => remote.node(n).sharedKernelClock);
    const record: FaultRecord = {
      id,
      spec,
      nodes,
      injectedAt: new Date().toISOString(),
      undo,
      ...(shared && { substitutions: [substitutionFor(`clock ${action}`)] }),
    };
    await opts?.beforeApply?.(record);
    await Promise.all(
      nodes.map(async (node) => {
        const u = perNode[node] as NodeUndo;
        if (mode === 'faketime') {
          const rc = u.rcFile as string;
          await remote.exec(
            node,
            writeMarkerCommand(nodeStateDir(remote.node(node), FAKETIME_AREA), `${id}.marker`, rc),
            {
              sudo: true,
            },
          );
          if (action === 'strobe') {
            const period = Number(p.periodMs ?? 200);
            const rounds = Math.max(1, Math.floor(Number(p.durationMs ?? 10_000) / (2 * period)));
            const loop = `i=0; while [ $i -lt ${rounds} ]; do printf '%s\\n' ${shellQuote(offsetSpec(deltaMs))} > ${shellQuote(rc)}; sleep ${(period / 1000).toFixed(3)}; printf '%s\\n' +0 > ${shellQuote(rc)}; sleep ${(period / 1000).toFixed(3)}; i=$((i + 1)); done`;
            await startStrobe(remote, node, id, loop, u);
            u.written = offsetSpec(deltaMs);
          } else {
            u.written = offsetSpec(u.deltaMs ?? deltaMs);
            await writeRc(remote, node, rc, u.written);
          }
        } else {
          const stopped = await remote.exec(node, stopNtpScript(), { sudo: true });
          u.ntp = parseStoppedNtp(stopped.stdout);
          await remote.exec(
            node,
            writeMarkerCommand(nodeStateDir(remote.node(node), SETTIME_AREA), id, JSON.stringify(u.ntp)),
            { sudo: true },
          );
          if (action === 'bump' || action === 'scramble') {
            // The clock `date -s` leaves, printed right after the shift, against this host's clock.
            const t0 = Date.now();
            const r = await remote.exec(node, bumpClockScript(u.deltaMs ?? deltaMs), { sudo: true });
            const t1 = Date.now();
            u.setOffsetMs = Math.round(Number(r.stdout.trim().split('\n').pop()) * 1000 - (t0 + t1) / 2);
            u.setErrorMs = Math.ceil((t1 - t0) / 2);
          } else if (action === 'strobe')
            await startStrobe(
              remote,
              node,
              id,
              strobeLoopScript(deltaMs, Number(p.periodMs ?? 200), Number(p.durationMs ?? 10_000)),
              u,
            );
          else u.setOffsetMs = await alignClock(remote, node);
        }
      }),
    );
    return record;
  },

  async evidence(remote, record): Promise<FaultEvidence> {
    const undo = record.undo as ClockUndo;
    const p = record.spec.params ?? {};
    const tol = Number(p.toleranceMs ?? 250);
    const timeCommand = typeof p.timeCommand === 'string' ? p.timeCommand : undefined;
    const signals: EvidenceSignal[] = [];
    const reasons: string[] = [];
    const expectedOf = (u: NodeUndo) => (undo.action === 'reset' ? 0 : (u.deltaMs ?? undo.deltaMs));
    for (const node of record.nodes) {
      const u = undo.perNode[node] as NodeUndo;
      const expected = expectedOf(u);
      if (undo.mode === 'faketime') {
        const rep = await binaryReport(remote, node, typeof p.binary === 'string' ? p.binary : '/bin/true');
        const current = await readText(remote, node, u.rcFile as string);
        signals.push({
          side: 'injector',
          node,
          signal: `faketime offset file ${u.rcFile}`,
          before: u.previous,
          during: current,
          landed: undo.action === 'strobe' || current === u.written,
        });
        let probe = await probeOffset(remote, node, rep.lib as string, u.rcFile as string);
        if (undo.action === 'strobe' && !within(probe, expected, tol)) {
          // A strobe alternates: sample across one period until the bumped phase shows.
          for (let i = 0; i < 10 && !within(probe, expected, tol); i++) {
            await new Promise((r) => setTimeout(r, Number(p.periodMs ?? 200) / 2));
            probe = await probeOffset(remote, node, rep.lib as string, u.rcFile as string);
          }
        }
        signals.push({
          side: 'victim',
          node,
          signal: 'clock offset (ms) of a probe under the same preload',
          before: u.probeBeforeMs,
          during: probe,
          landed: within(probe, expected, tol),
        });
        if (timeCommand) {
          let db = await dbOffset(remote, node, timeCommand);
          for (let i = 0; undo.action === 'strobe' && i < 10 && !within(db, expected, tol); i++) {
            await new Promise((r) => setTimeout(r, Number(p.periodMs ?? 200) / 2));
            db = await dbOffset(remote, node, timeCommand);
          }
          signals.push({
            side: 'victim',
            node,
            signal: `DB time offset (ms) from \`${timeCommand}\``,
            before: u.dbBeforeMs,
            during: db,
            landed: within(db, expected, tol),
          });
        }
        const aff = u.affectability;
        if (aff && !aff.affectable) {
          reasons.push(`${node}: not landed: ${aff.reason}`);
          for (const s of signals)
            if (s.node === node && s.side === 'victim' && s.signal.startsWith('DB')) s.landed = false;
          signals.push({
            side: 'victim',
            node,
            signal: `libfaketime can affect ${rep.binary}`,
            during: false,
            landed: false,
            note: aff.reason,
          });
        }
      } else {
        const asAction = undo.action === 'scramble' ? 'bump' : undo.action;
        signals.push(await settimeInjectorSignal(remote, record.id, asAction, node, u, expected, tol));
        // Both measurements' error bounds widen the tolerance: a slow node cannot be read more exactly.
        const slack = (m: { errorMs: number }) => tol + m.errorMs + (u.offsetBeforeErrorMs ?? 0);
        let m = await measureOffset(remote, node);
        for (
          let i = 0;
          undo.action === 'strobe' &&
          i < 10 &&
          !within(m.offsetMs - (u.offsetBeforeMs ?? 0), expected, slack(m));
          i++
        ) {
          await new Promise((r) => setTimeout(r, Number(p.periodMs ?? 200) / 2));
          m = await measureOffset(remote, node);
        }
        signals.push({
          side: 'victim',
          node,
          signal: 'node clock − control clock (ms)',
          before: u.offsetBeforeMs,
          during: m.offsetMs,
          landed: within(m.offsetMs - (u.offsetBeforeMs ?? 0), expected, slack(m)),
          note: `tolerance ±${slack(m)} ms (${tol} + the two measurements' round-trip bounds)`,
        });
        if (timeCommand) {
          const db = await dbControlOffset(remote, node, timeCommand);
          signals.push({
            side: 'victim',
            node,
            signal: `DB time − control clock (ms) from \`${timeCommand}\``,
            before: u.dbBeforeMs,
            during: db?.offsetMs ?? null,
            landed: within(
              (db?.offsetMs ?? Number.NaN) - (u.dbBeforeMs ?? 0),
              expected,
              tol + (db?.resolutionMs ?? 0) + (db?.errorMs ?? 0) + (u.dbBeforeErrorMs ?? 0),
            ),
            note: `tolerance ±${tol + (db?.resolutionMs ?? 0) + (db?.errorMs ?? 0) + (u.dbBeforeErrorMs ?? 0)} ms (${tol}, the DB's resolution and both round-trip bounds)`,
          });
        }
      }
    }
    return landingEvidence(signals, {
      judged: signals.filter((s) => s.side === 'victim'),
      failures: reasons,
      show: (s) => `${shownAt('during')(s)} (expected ${expectedOf(undo.perNode[s.node] ?? {})}±${tol})`,
    });
  },

  async heal(remote, record): Promise<void> {
    const undo = record.undo as Partial<ClockUndo>;
    const perNode = undo.perNode ?? {};
    const nodes = Object.keys(perNode).length ? Object.keys(perNode) : record.nodes;
    await Promise.all(
      nodes.map(async (node) => {
        const u = perNode[node] ?? {};
        await stopStrobe(remote, node, record.id);
        if (undo.mode === 'settime') {
          await alignClock(remote, node);
          if (u.ntp)
            await remote.exec(node, restoreNtpScript(u.ntp.services, u.ntp.timedatectlNtp), { sudo: true });
          await remote.exec(
            node,
            `rm -f ${shellQuote(`${nodeStateDir(remote.node(node), SETTIME_AREA)}/${record.id}`)}`,
            {
              sudo: true,
              check: false,
            },
          );
        } else if (u.rcFile) {
          await writeRc(remote, node, u.rcFile, '+0');
        }
        await remote.exec(
          node,
          `rm -f ${shellQuote(`${nodeStateDir(remote.node(node), FAKETIME_AREA)}/${record.id}.marker`)}`,
          {
            sudo: true,
            check: false,
          },
        );
      }),
    );
  },

  async evidenceAfterHeal(remote, record): Promise<FaultEvidence> {
    const undo = record.undo as ClockUndo;
    const p = record.spec.params ?? {};
    const tol = Number(p.toleranceMs ?? 250);
    const signals: EvidenceSignal[] = [];
    for (const node of record.nodes) {
      const u = undo.perNode[node] as NodeUndo;
      if (undo.mode === 'faketime') {
        const rep = await binaryReport(remote, node, '/bin/true');
        const after = await probeOffset(remote, node, rep.lib as string, u.rcFile as string);
        signals.push({
          side: 'victim',
          node,
          signal: 'clock offset (ms) of a probe under the same preload',
          before: u.probeBeforeMs,
          after,
          landed: within(after, 0, tol),
        });
        if (typeof p.timeCommand === 'string') {
          const db = await dbOffset(remote, node, p.timeCommand);
          signals.push({
            side: 'victim',
            node,
            signal: `DB time offset (ms) from \`${p.timeCommand}\``,
            before: u.dbBeforeMs,
            after: db,
            landed: within(db, 0, tol),
          });
        }
      } else {
        const m = await measureOffset(remote, node);
        signals.push({
          side: 'victim',
          node,
          signal: 'node clock − control clock (ms)',
          before: u.offsetBeforeMs,
          after: m.offsetMs,
          landed: within(m.offsetMs, 0, tol + m.errorMs),
          note: `tolerance ±${tol + m.errorMs} ms (${tol} + the measurement's round-trip bound)`,
        });
        if (typeof p.timeCommand === 'string') {
          const db = await dbControlOffset(remote, node, p.timeCommand);
          signals.push({
            side: 'victim',
            node,
            signal: `DB time − control clock (ms) from \`${p.timeCommand}\``,
            before: u.dbBeforeMs,
            after: db?.offsetMs ?? null,
            landed: within(db?.offsetMs ?? Number.NaN, 0, tol + (db?.resolutionMs ?? 0) + (db?.errorMs ?? 0)),
          });
        }
      }
    }
    return landingEvidence(signals, { noneLands: true, reason: 'a clock is still off after heal' });
  },

  async verifyClean(remote, node): Promise<CleanReport> {
    const found: string[] = [];
    const fixed: string[] = [];
    const strobes = parseMarkers(
      (
        await remote.exec(node, listMarkersCommand(nodeStateDir(remote.node(node), STROBE_AREA)), {
          sudo: true,
          check: false,
        })
      ).stdout,
    );
    for (const s of strobes) {
      found.push(`strobe loop ${s.value} (fault ${s.name})`);
      await stopStrobe(remote, node, s.name);
      fixed.push(`stopped strobe loop of ${s.name}`);
    }
    const markers = parseMarkers(
      (
        await remote.exec(node, listMarkersCommand(nodeStateDir(remote.node(node), FAKETIME_AREA)), {
          sudo: true,
          check: false,
        })
      ).stdout,
    ).filter((m) => m.name.endsWith('.marker'));
    const rcFiles = new Set(markers.map((m) => m.value));
    for (const rc of rcFiles) {
      const content = await readText(remote, node, rc);
      if (content !== '' && content !== '+0') {
        found.push(`faketime offset ${rc} = ${content}`);
        await writeRc(remote, node, rc, '+0');
        fixed.push(`reset ${rc} to +0`);
      }
    }
    for (const m of markers)
      await remote.exec(
        node,
        `rm -f ${shellQuote(`${nodeStateDir(remote.node(node), FAKETIME_AREA)}/${m.name}`)}`,
        {
          sudo: true,
          check: false,
        },
      );
    const settime = parseMarkers(
      (
        await remote.exec(node, listMarkersCommand(nodeStateDir(remote.node(node), SETTIME_AREA)), {
          sudo: true,
          check: false,
        })
      ).stdout,
    );
    for (const m of settime) {
      found.push(`clock set by fault ${m.name} with NTP stopped`);
      if (!remote.node(node).sharedKernelClock) {
        const ntp = JSON.parse(m.value) as { services: string[]; timedatectlNtp: boolean };
        await alignClock(remote, node);
        await remote.exec(node, restoreNtpScript(ntp.services, ntp.timedatectlNtp), { sudo: true });
        fixed.push(
          `clock reset to the control node's and NTP restored (${ntp.services.join(', ') || 'none'})`,
        );
      }
      await remote.exec(
        node,
        `rm -f ${shellQuote(`${nodeStateDir(remote.node(node), SETTIME_AREA)}/${m.name}`)}`,
        {
          sudo: true,
          check: false,
        },
      );
    }
    const left: string[] = [];
    for (const rc of rcFiles) {
      const c = await readText(remote, node, rc);
      if (c !== '' && c !== '+0') left.push(`still offset: ${rc} = ${c}`);
    }
    return { clean: left.length === 0, fixed, found: [...found, ...left] };
  },
};

async function startStrobe(
  remote: Remote,
  node: string,
  id: string,
  loop: string,
  _u: NodeUndo,
): Promise<void> {
  const dir = nodeStateDir(remote.node(node), STROBE_AREA);
  await remote.exec(
    node,
    // Braced: `a && b & c` would background the mkdir too, racing the pid file's write against it.
    `mkdir -p ${shellQuote(dir)} && { setsid sh -c ${shellQuote(loop)} </dev/null >/dev/null 2>&1 & echo $! > ${shellQuote(`${dir}/${id}`)}; }`,
    { sudo: true },
  );
}

async function stopStrobe(remote: Remote, node: string, id: string): Promise<void> {
  const f = shellQuote(`${nodeStateDir(remote.node(node), STROBE_AREA)}/${id}`);
  await remote.exec(node, `if [ -f ${f} ]; then kill $(cat ${f}) 2>/dev/null; rm -f ${f}; fi; true`, {
    sudo: true,
    check: false,
  });
}
