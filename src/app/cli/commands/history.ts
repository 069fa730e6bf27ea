import { type Command, Option } from 'commander';
import { helpEpilogue } from '../help.ts';

/** `faultline history convert|stats`: move histories between formats and describe them. */
export function register(program: Command): void {
  const history = program
    .command('history')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline history convert history.jsonl history.edn --to edn',
        'faultline history stats history.jsonl',
      ]),
    )
    .description('convert and describe operation histories');
  const fromOption = () =>
    new Option('--from <format>', 'input format (auto detects it from the content)')
      .choices(['auto', 'jsonl', 'json', 'edn', 'porcupine-etcd', 'porcupine-kv'])
      .default('auto');

  history
    .command('convert')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline history convert history.jsonl history.edn --to edn',
        'faultline history convert etcd.log - --from porcupine-etcd --to jsonl',
      ]),
    )
    .description('convert a history: Jepsen EDN, Porcupine logs, JSON → faultline JSONL, EDN, or ops-json')
    .argument('<in>', 'input history file')
    .argument('<out>', 'output file ("-" for stdout)')
    .addOption(fromOption())
    .addOption(
      new Option(
        '--to <format>',
        'output: jsonl (events), edn (Jepsen op maps), ops-json (operation records)',
      )
        .choices(['jsonl', 'edn', 'ops-json'])
        .default('jsonl'),
    )
    .option('--allow-torn-tail', 'drop (and report) a torn last line instead of failing')
    .action(
      async (input: string, output: string, o: { from: string; to: string; allowTornTail?: boolean }) => {
        const { convertHistory } = await import('../../../core/history/convert.ts');
        const { log } = await import('../../../core/util/log.ts');
        const r = await convertHistory(input, output, {
          format: o.from as 'auto',
          to: o.to as 'jsonl',
          tornTail: o.allowTornTail ? 'drop' : 'error',
          onTornTail: (t) => log().warn({ file: input, ...t }, `${input}:${t.line}: torn last line dropped`),
        });
        log().info(
          { input, output, to: o.to, ...r },
          `converted ${r.events} events${r.ops === null ? '' : ` (${r.ops} ops)`}`,
        );
      },
    );

  history
    .command('stats')
    .addHelpText(
      'after',
      helpEpilogue(['faultline history stats history.jsonl', 'faultline history stats history.edn --json']),
    )
    .description('events and ops by type and f, processes, retired processes, open ops, time span, ops/s')
    .argument('<file>', 'history file')
    .addOption(fromOption())
    .option('--json', 'print one JSON object')
    .option('--allow-torn-tail', 'drop (and report) a torn last line instead of failing')
    .action(async (file: string, o: { from: string; json?: boolean; allowTornTail?: boolean }) => {
      const { historyStats, formatStats } = await import('../../../core/history/stats.ts');
      const s = await historyStats(file, {
        format: o.from as 'auto',
        tornTail: o.allowTornTail ? 'drop' : 'error',
      });
      process.stdout.write(`${o.json ? JSON.stringify(s) : formatStats(s)}\n`);
    });
}
