import type { Command } from 'commander';
import { collectPlugin, PLUGIN_HELP } from '../../plugin/args.ts';
import { helpEpilogue } from '../help.ts';
import { addSshOptions } from '../ssh-flags.ts';

/**
 * `faultline run PLAN`: execute a test plan end to end on a real cluster (spec §6–§7) and write the
 * session directory. Exit codes: 0 session DONE (every row passed or met the plan's expected verdict),
 * 1 FAIL (an unexpected reproducible FAIL or an unmet expectation), 2 INCONCLUSIVE / DONE_WITH_CONCERNS /
 * BLOCKED, 3 the plan must not run, 254 bad input.
 */
const collect = (v: string, prev: string[]) => [
  ...prev,
  ...v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

export function register(program: Command): void {
  const cmd = program
    .command('run')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline run plans/etcd-register.md --local 3',
        'faultline run plans/etcd-register.md --inventory nodes.yaml --tier hardening --seed 7 --shard 2/3',
        'faultline run plans/etcd-proxy.md --no-ssh --nodes db1.example.net:2379,db2.example.net:2379,db3.example.net:2379 --scenario S1',
      ]),
    )
    .description('run a test plan end to end: validate, probe, run each scenario, verdicts and reports')
    .argument('<plan>', 'plan file: Markdown (.md) or native YAML/JSON')
    .option('--inventory <file>', 'inventory of the cluster nodes')
    .option('--local <n>', 'use (or bring up) a local cluster of N network-namespace nodes')
    .option(
      '--no-ssh',
      "client-only run: --nodes names the database's endpoints (host:port,…); no SSH, no install, only proxy faults",
    )
    .option('--nodes <endpoints>', "with --no-ssh: the database's endpoints, host:port,…")
    .option('--cluster-name <name>', 'name of the local cluster', 'faultline-run')
    .option('--keep-cluster', 'leave a local cluster this run brought up running')
    .option(
      '--cluster-wait <seconds>',
      'with --local: wait this long for another run holding the local cluster to finish (default: refuse at once)',
    )
    .option('--tier <tier>', 'budget tier to run: smoke | hardening | release', 'smoke')
    .option('--scenario <id>', 'run only this scenario (repeatable, or comma-separated)', collect, [])
    .option('--out <root>', 'session root directory', './test-sessions/')
    .option('--sut-repo <dir>', 'SUT repository to scan for its toolbox before any scenario')
    .option('--seed <n>', 'base seed (seed i of a tier is N+i); random when absent')
    .option('--skip <cap>', 'a capability that is not available / to be skipped (repeatable)', collect, [])
    .option(
      '--assume <cap>',
      'a capability the operator vouches for when the probe cannot tell (repeatable)',
      collect,
      [],
    )
    .option(
      '--install',
      'run the install command for trivially installable missing capabilities (asks first)',
    )
    .option('--yes', 'answer yes to confirmations and do not ask questions')
    .option('--on-missing <mode>', 'a non-trivial gap: inconclusive | substitute | wait', 'inconclusive')
    .option('--deadline <duration>', 'global deadline (e.g. 10m); scenarios not started by then are NOT-RUN')
    .option('--max-reduction-runs <n>', 're-run budget for reducing a reproducible FAIL', '6')
    .option(
      '--shard <k/n>',
      "run shard K of N: a deterministic share of the plan's (scenario, seed) units, balanced by budget (merge with `faultline sessions merge`)",
    )
    .option(
      '--dry-run',
      "print the (scenario, seed) units this run or shard would run and each row's fault schedule, and stop (exit 3 when the plan must not run)",
    )
    .option(
      '--time-scale <k>',
      'for a cluster K times slower than the plan was sized for (emulated guests): every duration in the plan (runs, fault windows, op timeout, recovery budget) ×K and its rate ÷K; recorded in the session (1 to 20, default 1)',
    )
    .option('--replay <file>', 'run a reduced fault schedule (artifacts/<S>/reduced-schedule.json)')
    .option(
      '--baseline <dir>',
      "an earlier session (or its metrics/ directory): each scenario's RF9 compares with its metrics/<S>.json",
    )
    .option(
      '--junit-inconclusive <as>',
      'how junit.xml reports INCONCLUSIVE / PARTIAL / NOT-RUN rows: error | failure',
      'error',
    )
    .option('--plugin <path>', PLUGIN_HELP, collectPlugin, [])
    .option(
      '--trust-plan-modules',
      "import the plugin modules the plan's bindings name (module:): they are code; without this flag only --plugin modules run",
    )
    .option(
      '--trust-plan-commands',
      "run the shell commands the plan's landing evidence names (`command: …`) with sudo on the nodes, and ask the binaries only its requirements table names for --version; without this flag such a signal is not run and the fault it should prove is not proven by it, and such a binary is only looked up",
    )
    .option('--json', 'print the result as one JSON object on stdout');
  addSshOptions(cmd).action(async (plan: string, flags: Record<string, unknown>) => {
    const { runCommand } = await import('./run-action.ts');
    process.exitCode = await runCommand(plan, flags);
  });
}
