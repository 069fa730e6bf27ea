import { isAbsolute, relative, resolve } from 'node:path';
import { shellJoin } from '../../core/control/quote.ts';
import type { SshCliOptions } from '../../core/control/ssh-cli-options.ts';

/**
 * The command that re-runs a reproducible FAIL, as the user can paste it: `faultline run PLAN` with the
 * flags that chose the cluster (`--inventory FILE`, or `--local N --cluster-name NAME`), the tier, host-key
 * flags, plugins and capability choices of the original run, then the scenario, its seed and the reduced
 * schedule. Paths are relative to the directory the original run was started from (`cwd`).
 */
export interface ReproducerOptions {
  plan: string;
  inventory?: string;
  local?: number;
  clusterName: string;
  tier: string;
  ssh?: SshCliOptions;
  skip: readonly string[];
  assume: readonly string[];
  plugins?: readonly string[];
  trustPlanModules?: boolean;
  trustPlanCommands?: boolean;
  timeScale?: number;
}

function rel(path: string, cwd: string): string {
  const abs = isAbsolute(path) ? path : resolve(cwd, path);
  const r = relative(cwd, abs);
  return r === '' ? '.' : r;
}

export function reproducerCommand(
  o: ReproducerOptions,
  fail: { scenario: string; seed: number; replayPath: string },
  cwd: string = process.cwd(),
): string {
  const args = ['faultline', 'run', rel(o.plan, cwd)];
  if (o.inventory) args.push('--inventory', rel(o.inventory, cwd));
  if (o.local !== undefined) args.push('--local', String(o.local), '--cluster-name', o.clusterName);
  if (o.tier !== 'smoke') args.push('--tier', o.tier);
  if (o.timeScale !== undefined && o.timeScale !== 1) args.push('--time-scale', String(o.timeScale));
  if (o.ssh?.acceptNewHostKeys) args.push('--accept-new-host-keys');
  if (o.ssh?.insecureSkipHostKeyCheck) args.push('--insecure-skip-host-key-check');
  for (const k of o.ssh?.knownHosts ?? []) args.push('--known-hosts', rel(k, cwd));
  for (const p of o.plugins ?? []) args.push('--plugin', rel(p, cwd));
  if (o.trustPlanModules) args.push('--trust-plan-modules');
  if (o.trustPlanCommands) args.push('--trust-plan-commands');
  for (const s of o.skip) args.push('--skip', s);
  for (const a of o.assume) args.push('--assume', a);
  args.push('--scenario', fail.scenario, '--seed', String(fail.seed), '--replay', rel(fail.replayPath, cwd));
  return shellJoin(args);
}
