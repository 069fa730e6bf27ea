import type { Command } from 'commander';
import { faultClasses } from '../../../../nemeses/registry.ts';
import { clients } from '../../../lib/clients/registry.ts';
import { databases } from '../../../lib/databases/registry.ts';
import { workloads } from '../../../lib/workloads/index.ts';
import { collectPlugin, PLUGIN_HELP } from '../../plugin/args.ts';
import { TEST_DEFAULTS } from '../../test/test-defaults.ts';
import { registryOption } from '../choices.ts';
import { optionOf } from '../commander-spec.ts';
import { helpEpilogue } from '../help.ts';
import { addSshOptions } from '../ssh-flags.ts';

/**
 * `faultline test`: bring up a DB on a cluster, run a workload under faults, heal, check, and exit
 * 0 valid / 1 invalid / 2 unknown (254 bad input). The implementation loads inside the action.
 */
export function register(program: Command): void {
  const cmd = program
    .command('test')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline test --local 5 --db etcd -w register --nemesis partition,kill --time-limit 60s',
        'faultline test --nodes n1,n2,n3 --username admin --ssh-private-key ~/.ssh/id_ed25519 --test-count 5 --seed 100',
        'faultline test --no-ssh --nodes 127.0.0.1:6379 --db redis --nemesis proxy-latency,proxy-reset',
      ]),
    )
    .description(
      'run a workload against a database under faults, check the history and write the findings report (exit 0/1/2)',
    )
    .addOption(
      optionOf(
        registryOption('--db <name>', 'the database to set up on the nodes', databases, TEST_DEFAULTS.db),
      ),
    )
    .addOption(
      optionOf(registryOption('--client <name>', "the client (default: the database's own)", clients)),
    )
    .addOption(
      optionOf(registryOption('-w, --workload <name>', 'the workload', workloads, TEST_DEFAULTS.workload)),
    )
    .option('--inventory <file>', 'nodes file (YAML); see `faultline cluster`')
    .option('--local <n>', 'use (and create if missing) a local cluster of n network-namespace nodes')
    .option('--cluster-name <name>', 'local cluster name (with --local)', TEST_DEFAULTS.clusterName)
    .option(
      '--cluster-wait <seconds>',
      'with --local: wait this long for another run holding the local cluster to finish (default: refuse at once)',
    )
    .option('--nodes <hosts>', "Jepsen's node list: comma-separated hosts (host or host:port), named by host")
    .option('--nodes-file <file>', "Jepsen's nodes file: one host per line (# comments)")
    .option(
      '--no-ssh',
      "client-only run: --nodes names the database's endpoints (host:port,…); no SSH, no install, only proxy faults",
    )
    .option('--username <user>', 'login user for --nodes/--nodes-file (default root)')
    .option('--ssh-private-key <file>', 'private key for --nodes/--nodes-file')
    .option(
      '--test-count <n>',
      'run the test n times with seeds seed, seed+1, …, each a session of its own; the exit code covers every run',
      String(TEST_DEFAULTS.testCount),
    )
    .option(
      '--nemesis <faults>',
      `comma-separated fault classes: ${faultClasses()
        .map((c) => c.name)
        .join(', ')}; none; all (${faultClasses()
        .filter((c) => c.inAll)
        .map((c) => c.name)
        .join(', ')})`,
      TEST_DEFAULTS.nemesis,
    )
    .option(
      '--nemesis-interval <duration>',
      'mean time between fault starts/stops',
      TEST_DEFAULTS.nemesisInterval,
    )
    .option('--time-limit <duration>', 'how long the workload runs', TEST_DEFAULTS.timeLimit)
    .option(
      '--concurrency <n>',
      'client processes: a number, or Jepsen’s 3n (× node count)',
      TEST_DEFAULTS.concurrency,
    )
    .option(
      '-r, --rate <hz>',
      'target ops per second across all clients (open loop)',
      String(TEST_DEFAULTS.rate),
    )
    .option('--seed <n>', 'seed for every random choice (ops and fault schedule)')
    .option('--out <root>', 'session root: the run goes to ROOT/<db>-<workload>/<UTC>/', './test-sessions/')
    .option(
      '--op-timeout <duration>',
      'an op still running after this completes as info (timeout)',
      TEST_DEFAULTS.opTimeout,
    )
    .option('--recovery <duration>', 'wait between healing and the final reads', TEST_DEFAULTS.recovery)
    .option('--serializable-reads', 'etcd: serializable (possibly stale) reads; Redis: read from replicas')
    .option(
      '--db-version <version>',
      'the version the database must report (etcd --version, Redis INFO server); a mismatch is reported',
    )
    .option(
      '--db-tarball <file-or-url>',
      'install your own build: a release tarball (uploaded over SFTP, or a URL the nodes download); needs --db-sha256',
    )
    .option(
      '--db-sha256 <hex>',
      'sha256 of --db-tarball (or --db-binary), verified on every node before anything is installed',
    )
    .option(
      '--db-binary <path>',
      'install your own build: one server binary (etcd, redis-server), uploaded over SFTP',
    )
    .option('--replay <schedule>', 'replay a schedule.json from an earlier run instead of generating ops')
    .option('--fault-schedule <file>', 'replay the faults of an earlier run (its fault-schedule.json)')
    .option('--leave-db-running', 'do not tear the DB down at the end')
    .option('--plugin <path>', PLUGIN_HELP, collectPlugin, [])
    .option('--json', 'print results.json to stdout instead of the table');
  addSshOptions(cmd).action(async (flags: Record<string, unknown>) => {
    const { testCommand } = await import('./test-action.ts');
    process.exitCode = await testCommand(flags);
  });
}
