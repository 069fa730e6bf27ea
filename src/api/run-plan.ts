import { TIER_NAMES } from '../app/plan/binding.ts';
import type { SessionVerdict } from '../app/plan/verdict-states.ts';
import { loadPlugin } from '../app/plugin/load-plugins.ts';
import { runPlan as runSession } from '../app/run/plan-run.ts';

/**
 * `runPlan(options)`: the `faultline run PLAN` command as a function (what `faultline author` skeletons
 * call): run the plan's scenarios on an inventory or a local cluster, write the session, and return the
 * exit code, the session directory and one verdict row per scenario. Anything left out takes the
 * command's default; it never asks (no terminal), so a plan needing a decision gets `onMissing`.
 */
export interface RunPlanOptions {
  /** The plan file (Markdown or YAML). */
  plan: string;
  inventory?: string;
  /** A local cluster of N nodes (root, Linux), named `clusterName`. */
  local?: number;
  /** Local cluster name (default faultline-run). */
  clusterName?: string;
  /** Leave the local cluster up afterwards (default false). */
  keepCluster?: boolean;
  /** smoke (default), hardening or release. */
  tier?: RunPlanTier;
  /** Scenario ids to run (default: every scenario). */
  scenarios?: readonly string[];
  /** The session store root (default test-sessions). */
  out?: string;
  seed?: number;
  /** Install what the plan needs on the nodes (default false). */
  install?: boolean;
  /** When a need is missing: inconclusive (default), substitute, wait. */
  onMissing?: 'inconclusive' | 'substitute' | 'wait';
  deadlineS?: number;
  /** Runs spent reducing a failing schedule (default 6, as the command). */
  maxReductionRuns?: number;
  /** Plugin modules to load first (a plan's own `module:` bindings load by themselves). */
  plugins?: readonly string[];
  /**
   * Run the shell commands the plan's landing evidence names (`command: …`), and ask binaries only the
   * plan's requirements name for `--version`, as `run --trust-plan-commands` does (default false: they
   * are code, and a plan is data).
   */
  trustPlanCommands?: boolean;
  /** Host keys: the inventory's `hostKeyCheck` unless one of these says otherwise. */
  ssh?: { acceptNewHostKeys?: boolean; insecureSkipHostKeyCheck?: boolean; knownHosts?: string[] };
  /** Where progress lines go (default: nowhere). */
  print?: (line: string) => void;
}

// Declared here rather than re-exported from the application: the package's type declarations must not
// reach the SSH layer's (its @types are not the user's).
export type RunPlanTier = 'smoke' | 'hardening' | 'release';
// Fails to compile when the tiers change without this type.
const _tiers: readonly RunPlanTier[] = TIER_NAMES;
void _tiers;

export interface RunPlanResult {
  /** The session's exit code: 0 DONE, 1 FAIL, 2 INCONCLUSIVE / DONE_WITH_CONCERNS / BLOCKED, 3 plan must not run. */
  exitCode: number;
  sessionDir: string | null;
  verdict: SessionVerdict | null;
  /** One row per scenario (and arm): its verdict, the plan's expectation, the tier met and why. */
  rows: { scenario: string; verdict: string; expected: string; tier: string; reason: string }[];
}

export async function runPlan(o: RunPlanOptions): Promise<RunPlanResult> {
  const plugins = [...(o.plugins ?? [])];
  for (const p of plugins) await loadPlugin(p);
  return runSession({
    plan: o.plan,
    ...(o.inventory !== undefined && { inventory: o.inventory }),
    ...(o.local !== undefined && { local: o.local }),
    ...(o.ssh && { ssh: { ...o.ssh, ...(o.inventory !== undefined && { inventory: o.inventory }) } }),
    ...(o.seed !== undefined && { seed: o.seed }),
    ...(o.deadlineS !== undefined && { deadlineS: o.deadlineS }),
    ...(plugins.length > 0 && { plugins }),
    ...(o.trustPlanCommands === true && { trustPlanCommands: true }),
    clusterName: o.clusterName ?? 'faultline-run',
    keepCluster: o.keepCluster ?? false,
    tier: o.tier ?? 'smoke',
    scenarios: [...(o.scenarios ?? [])],
    out: o.out ?? 'test-sessions',
    skip: [],
    assume: [],
    install: o.install ?? false,
    yes: true,
    onMissing: o.onMissing ?? 'inconclusive',
    maxReductionRuns: o.maxReductionRuns ?? 6,
    interactive: false,
    print: o.print ?? (() => {}),
  });
}
