import type { Command } from 'commander';
import { helpEpilogue } from '../help.ts';

/**
 * `faultline sessions list|show|diff|prune|compress|index`: the session store across time (read-only
 * except prune and compress, which take --dry-run, and index, which rebuilds the summary index).
 */
export function register(program: Command): void {
  const sessions = program
    .command('sessions')
    .description('the session store across time: list, show, diff, merge, prune, compress, index')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline sessions list',
        'faultline sessions diff',
        'faultline sessions prune --keep 30 --dry-run',
      ]),
    );
  const root = '--root <dir>';
  const rootHelp = 'session store root';
  sessions
    .command('list')
    .description('every name in the store with its sessions and verdict summaries, newest last')
    .addHelpText(
      'after',
      helpEpilogue(['faultline sessions list', 'faultline sessions list --root /srv/nightly']),
    )
    .option(root, rootHelp, './test-sessions/')
    .option('--name <name>', 'only this plan slug or test name')
    .option('--last <n>', 'only the last N sessions of each name', '30')
    .option('--json', 'print JSON')
    .action(async (o: { root: string; name?: string; last: string; json?: boolean }) => {
      const { listCommand } = await import('./sessions-action.ts');
      process.exitCode = listCommand(o);
    });
  sessions
    .command('show')
    .description('one session: its verdict, headline and rows (default: the latest)')
    .addHelpText(
      'after',
      helpEpilogue(['faultline sessions show', 'faultline sessions show --name etcd-register']),
    )
    .argument('[session]', 'a session directory, <name>/<id>, an id, or latest', 'latest')
    .option(root, rootHelp, './test-sessions/')
    .option('--name <name>', 'plan slug or test name, when the store holds several')
    .option('--json', 'print JSON')
    .action(async (ref: string, o: { root: string; name?: string; json?: boolean }) => {
      const { showCommand } = await import('./sessions-action.ts');
      process.exitCode = showCommand(ref, o);
    });
  sessions
    .command('diff')
    .description('new failures, fixed rows, flapping rows and moved figures between two sessions')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline sessions diff',
        'faultline sessions diff --name etcd-register --threshold 10',
      ]),
    )
    .argument('[a]', 'the older session (default: previous)', 'previous')
    .argument('[b]', 'the newer session (default: latest)', 'latest')
    .option(root, rootHelp, './test-sessions/')
    .option('--name <name>', 'plan slug or test name, when the store holds several')
    .option('--threshold <percent>', 'report figures that moved more than this', '20')
    .option('--flap-window <n>', 'sessions looked at for flapping rows', '10')
    .option('--json', 'print JSON')
    .action(async (a: string, b: string, o: Record<string, string | boolean | undefined>) => {
      const { diffCommand } = await import('./sessions-action.ts');
      process.exitCode = diffCommand(a, b, o);
    });
  sessions
    .command('merge')
    .description(
      'merge the sessions of `faultline run --shard K/N` into one session, judged as one unsharded run',
    )
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline sessions merge shards/1/etcd-register/latest shards/2/etcd-register/latest shards/3/etcd-register/latest --out test-sessions',
      ]),
    )
    .argument('<dirs...>', 'the shard session directories, one per shard')
    .option('--out <root>', 'session root directory of the merged session', './test-sessions/')
    .option(
      '--junit-inconclusive <as>',
      'how junit.xml reports INCONCLUSIVE / PARTIAL / NOT-RUN rows: error | failure',
      'error',
    )
    .option('--json', 'print the result as one JSON object on stdout')
    .action(async (dirs: string[], o: Record<string, string | boolean | undefined>) => {
      const { mergeCommand } = await import('./run-action.ts');
      process.exitCode = await mergeCommand(dirs, o);
    });
  sessions
    .command('prune')
    .description('remove old sessions (never the newest of a name)')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline sessions prune --keep 30 --dry-run',
        'faultline sessions prune --older-than 30d',
      ]),
    )
    .option(root, rootHelp, './test-sessions/')
    .option('--name <name>', 'only this plan slug or test name')
    .option('--keep <n>', 'keep the newest N sessions of each name')
    .option('--older-than <duration>', 'remove sessions older than this (30d, 12h)')
    .option('--dry-run', 'say what would be removed, remove nothing')
    .action(async (o: Record<string, string | boolean | undefined>) => {
      const { pruneCommand } = await import('./sessions-action.ts');
      process.exitCode = await pruneCommand(o);
    });
  sessions
    .command('compress')
    .description('gzip large artifacts (histories, node logs) in place; every command still reads them')
    .addHelpText(
      'after',
      helpEpilogue(['faultline sessions compress', 'faultline sessions compress --min-size 16K']),
    )
    .option(root, rootHelp, './test-sessions/')
    .option('--name <name>', 'only this plan slug or test name')
    .option('--min-size <bytes>', 'compress files of at least this size (K, M suffixes)', '256K')
    .option('--dry-run', 'say what would be compressed')
    .action(async (o: Record<string, string | boolean | undefined>) => {
      const { compressCommand } = await import('./sessions-action.ts');
      process.exitCode = await compressCommand(o);
    });
  sessions
    .command('index')
    .description(
      'rebuild the summary index (<name>/.index.jsonl) that list and serve read instead of every report',
    )
    .addHelpText(
      'after',
      helpEpilogue(['faultline sessions index', 'faultline sessions index --root /srv/nightly']),
    )
    .option(root, rootHelp, './test-sessions/')
    .option('--name <name>', 'only this plan slug or test name')
    .action(async (o: { root: string; name?: string }) => {
      const { indexCommand } = await import('./sessions-action.ts');
      process.exitCode = indexCommand(o);
    });
}
