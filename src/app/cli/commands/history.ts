import { maxLineBytesOption } from '../max-line-bytes.ts';
import type { CommandSpec, OptionSpec } from '../spec.ts';

/** `faultline history convert|stats`: move histories between formats and describe them. */
export function command(): CommandSpec {
  const from: OptionSpec = {
    flags: '--from <format>',
    description: 'input format (auto detects it from the content)',
    choices: ['auto', 'jsonl', 'json', 'edn', 'porcupine-etcd', 'porcupine-kv'],
    default: 'auto',
  };
  const tornTail: OptionSpec = {
    flags: '--allow-torn-tail',
    description: 'drop (and report) a torn last line instead of failing',
  };
  return {
    name: 'history',
    description: 'convert and describe operation histories',
    examples: [
      'faultline history convert history.jsonl history.edn --to edn',
      'faultline history stats history.jsonl',
    ],
    subcommands: [
      {
        name: 'convert',
        description:
          'convert a history: Jepsen EDN, Porcupine logs, JSON → faultline JSONL, EDN, or ops-json',
        examples: [
          'faultline history convert history.jsonl history.edn --to edn',
          'faultline history convert etcd.log - --from porcupine-etcd --to jsonl',
        ],
        arguments: [
          ['<in>', 'input history file'],
          ['<out>', 'output file ("-" for stdout)'],
        ],
        options: [
          from,
          {
            flags: '--to <format>',
            description: 'output: jsonl (events), edn (Jepsen op maps), ops-json (operation records)',
            choices: ['jsonl', 'edn', 'ops-json'],
            default: 'jsonl',
          },
          tornTail,
          maxLineBytesOption,
        ],
        action: async ([input, output], options) => {
          const o = options as { from: string; to: string; allowTornTail?: boolean; maxLineBytes?: number };
          const { convertHistory } = await import('../../../core/history/convert.ts');
          const { log } = await import('../../../core/util/log.ts');
          const r = await convertHistory(input as string, output as string, {
            format: o.from as 'auto',
            to: o.to as 'jsonl',
            tornTail: o.allowTornTail ? 'drop' : 'error',
            maxLineBytes: o.maxLineBytes,
            onTornTail: (t) =>
              log().warn({ file: input, ...t }, `${input}:${t.line}: torn last line dropped`),
          });
          log().info(
            { input, output, to: o.to, ...r },
            `converted ${r.events} events${r.ops === null ? '' : ` (${r.ops} ops)`}`,
          );
        },
      },
      {
        name: 'stats',
        description: 'events and ops by type and f, processes, retired processes, open ops, time span, ops/s',
        examples: ['faultline history stats history.jsonl', 'faultline history stats history.edn --json'],
        arguments: [['<file>', 'history file']],
        options: [
          from,
          { flags: '--json', description: 'print one JSON object' },
          tornTail,
          maxLineBytesOption,
        ],
        action: async ([file], options) => {
          const o = options as {
            from: string;
            json?: boolean;
            allowTornTail?: boolean;
            maxLineBytes?: number;
          };
          const { historyStats, formatStats } = await import('../../../core/history/history-stats.ts');
          const s = await historyStats(file as string, {
            format: o.from as 'auto',
            tornTail: o.allowTornTail ? 'drop' : 'error',
            maxLineBytes: o.maxLineBytes,
          });
          process.stdout.write(`${o.json ? JSON.stringify(s) : formatStats(s)}\n`);
        },
      },
    ],
  };
}
