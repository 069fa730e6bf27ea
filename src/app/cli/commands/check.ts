import type { CheckerRequest } from '../../../../checkers/compose.ts';
import { models } from '../../../../checkers/linearizability/models/registry.ts';
import { checkers } from '../../../../checkers/registry.ts';
import type { CheckContext, CheckResult, Validity } from '../../../../checkers/types.ts';
import type { LoadOptions } from '../../../core/history/read.ts';
import { collectPlugin, PLUGIN_HELP } from '../../plugin/args.ts';
import { namesOf, registryOption } from '../choices.ts';
import { maxLineBytesOption } from '../max-line-bytes.ts';
import type { CommandSpec } from '../spec.ts';

/**
 * `faultline check HISTORY --checker NAME[,NAME…]`: run any registered oracle over a recorded history.
 * Exit 0 valid, 1 invalid, 2 unknown (merged false > unknown > true), 254 bad input. Engines and the
 * history reader load only inside the action.
 */

interface CheckFlags {
  checker?: string;
  list?: boolean;
  format: string;
  maxLineBytes?: number;
  model?: string;
  initialValue?: string;
  nilRead?: string;
  failedCas?: string;
  timeout?: string;
  html?: string;
  workload?: string;
  consistencyModels?: string;
  anomalies?: string;
  cycleSearchTimeout?: string;
  options?: string;
  independent?: boolean;
  out?: string;
  json?: boolean;
}

function list(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** A JSON literal when it parses (`0`, `null`, `"x"`, `[1,2]`), else the text itself. */
function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The `check` command's one definition (read by commander and by the start-up fast path). */
export function command(): CommandSpec {
  const formats = ['auto', 'jsonl', 'json', 'edn', 'porcupine-etcd', 'porcupine-kv'];
  return {
    name: 'check',
    description: 'check a recorded history with one or more oracles (exit 0 valid, 1 invalid, 2 unknown)',
    examples: [
      'faultline check run/history.jsonl --checker linearizable --model register',
      'faultline check history.edn --checker elle --workload list-append',
      'faultline check etcd.log --checker linearizable --model cas-register --html out/lin.html',
    ],
    arguments: [['[history]', 'history file (faultline JSONL, Jepsen EDN, elle-cli JSON, Porcupine logs)']],
    options: [
      { flags: '-c, --checker <names>', description: `comma-separated checker names: ${namesOf(checkers)}` },
      { flags: '--list', description: 'list the checkers and exit' },
      { flags: '--format <format>', description: 'history format', choices: formats, default: 'auto' },
      maxLineBytesOption,
      registryOption('--model <model>', 'linearizable: the sequential model', models),
      { flags: '--initial-value <value>', description: 'linearizable: initial value (JSON, or text)' },
      {
        flags: '--nil-read <mode>',
        description: 'linearizable: an ok read of nil is unknown (Knossos) or a value',
        choices: ['unknown', 'value'],
      },
      {
        flags: '--failed-cas <mode>',
        description: 'linearizable: a failed cas did not happen (Knossos) or saw another value',
        choices: ['ignored', 'mismatch'],
      },
      { flags: '--timeout <duration>', description: 'linearizable: search budget, e.g. 30s' },
      { flags: '--html <file>', description: 'linearizable: write an HTML visualisation here' },
      { flags: '--workload <workload>', description: 'elle: list-append or rw-register' },
      { flags: '--consistency-models <models>', description: 'elle: comma-separated consistency models' },
      { flags: '--anomalies <anomalies>', description: 'elle: comma-separated extra anomaly types' },
      { flags: '--cycle-search-timeout <duration>', description: 'elle: cycle search budget, e.g. 1s' },
      { flags: '--options <file>', description: 'JSON file: {"<checker>": {options…}}; flags override it' },
      {
        flags: '--independent',
        description: "check each key's ops on their own and merge (Jepsen's independent checker)",
      },
      { flags: '--out <dir>', description: 'directory for artifacts (plots, HTML, explanations)' },
      { flags: '--plugin <path>', description: PLUGIN_HELP, parse: collectPlugin, default: [] },
      { flags: '--json', description: 'print the results as one JSON object' },
    ],
    action: async ([history], flags) => {
      process.exitCode = await runCheckCommand(history, flags as unknown as CheckFlags);
    },
  };
}

type OptionsMap = Record<string, Record<string, unknown>>;

async function readOptionsFile(file: string): Promise<OptionsMap> {
  const { readFile } = await import('node:fs/promises');
  const { InputError, UserError } = await import('../../../core/util/errors.ts');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UserError(`${file}: cannot read options file: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const pos = /position (\d+)/.exec((err as Error).message);
    const line = pos ? text.slice(0, Number(pos[1])).split('\n').length : 1;
    throw new InputError(file, line, null, `invalid JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InputError(file, 1, null, 'expected an object {"<checker>": {options…}}');
  }
  for (const [k, v] of Object.entries(parsed)) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      throw new InputError(file, 1, k, 'options for a checker must be an object');
    }
  }
  return parsed as OptionsMap;
}

/** Options from the flags, per checker name; only flags the user gave appear. */
async function optionsFromFlags(flags: CheckFlags): Promise<OptionsMap> {
  // Loaded only for a budget flag: the default command line does without it.
  const parseDuration = async (text: string, flag: string) =>
    (await import('../../../core/util/duration.ts')).parseDuration(text, flag);
  const lin: Record<string, unknown> = {};
  if (flags.model !== undefined) lin.model = flags.model;
  if (flags.initialValue !== undefined) lin.initialValue = jsonOrText(flags.initialValue);
  if (flags.nilRead !== undefined) lin.nilRead = flags.nilRead;
  if (flags.failedCas !== undefined) lin.failedCas = flags.failedCas;
  if (flags.timeout !== undefined) lin.timeoutMs = await parseDuration(flags.timeout, '--timeout');
  if (flags.html !== undefined) lin.htmlPath = flags.html;
  const elle: Record<string, unknown> = {};
  if (flags.workload !== undefined) elle.workload = flags.workload;
  if (flags.consistencyModels !== undefined) elle.consistencyModels = list(flags.consistencyModels);
  if (flags.anomalies !== undefined) elle.anomalies = list(flags.anomalies);
  if (flags.cycleSearchTimeout !== undefined) {
    elle.cycleSearchTimeoutMs = await parseDuration(flags.cycleSearchTimeout, '--cycle-search-timeout');
  }
  return { linearizable: lin, elle };
}

/**
 * Run the checkers over a history file. When every checker has a stream form (Elle's does), the file is
 * read in batches and paired on the fly, and each op goes to the checkers as it closes: no event or
 * Operation array is kept, so a history of millions of ops checks in the checkers' own memory.
 * Otherwise the whole history is loaded and paired first.
 */
async function checkHistoryFile(
  historyFile: string,
  read: Pick<LoadOptions, 'format' | 'maxLineBytes'>,
  requests: CheckerRequest[],
  ctx: CheckContext,
): Promise<{ valid: Validity; results: CheckResult[]; ops: number }> {
  const { runCheckers, runCheckersOnStream } = await import('../../../../checkers/compose.ts');
  const { loadHistory, readEventBatches } = await import('../../../core/history/read.ts');
  const { pairEvents, pairEventStream } = await import('../../../core/history/pair.ts');
  const streamed = await runCheckersOnStream(
    requests,
    (add, intake) =>
      pairEventStream(
        readEventBatches(historyFile, { ...read, parallel: true, compactValues: intake?.compactValues }),
        add,
      ),
    ctx,
    { badOptions: 'throw' },
  );
  if (streamed) return streamed;
  const { ops } = pairEvents(await loadHistory(historyFile, { ...read, parallel: true }));
  const run = await runCheckers(requests, ops, ctx, { badOptions: 'throw' });
  return { ...run, ops: ops.length };
}

const VERDICT = { true: 'VALID', false: 'INVALID', unknown: 'UNKNOWN' } as const;

export async function runCheckCommand(historyFile: string | undefined, flags: CheckFlags): Promise<number> {
  const { UserError, EXIT } = await import('../../../core/util/errors.ts');
  if (flags.list) {
    const rows = checkers.names().map((n) => {
      const origin = checkers.originOf(n);
      return `${n.padEnd(24)} ${checkers.get(n)?.summary ?? ''}${origin === 'faultline' ? '' : ` (${origin})`}`;
    });
    process.stdout.write(`${rows.join('\n')}\n`);
    return EXIT.valid;
  }
  if (historyFile === undefined) throw new UserError('check: give a history file (or --list)');
  const names = list(flags.checker ?? '');
  if (names.length === 0) throw new UserError('check: give --checker NAME[,NAME…] (see --list)');
  for (const n of names)
    if (!checkers.has(n)) throw new UserError(`--checker: ${checkers.unknownMessage(n)}`);
  const flagOptions = await optionsFromFlags(flags);
  const fileOptions = flags.options ? await readOptionsFile(flags.options) : {};
  const requests = names.map((n) => {
    const name = checkers.canonical(n) as string;
    return {
      name,
      options: { ...(fileOptions[name] ?? {}), ...(flagOptions[name] ?? {}) },
      ...(flags.independent && { independent: true }),
    };
  });
  const ctx = flags.out ? { outDir: flags.out } : {};
  const run = await checkHistoryFile(
    historyFile,
    { format: flags.format as LoadOptions['format'], maxLineBytes: flags.maxLineBytes },
    requests,
    ctx,
  );
  const opCount = run.ops;
  const valid = run.valid;
  const results = Object.fromEntries(requests.map((r, i) => [r.name, run.results[i]]));
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ valid, history: historyFile, ops: opCount, results })}\n`);
  } else {
    const lines: string[] = [];
    for (const r of run.results) {
      lines.push(`${r.checker}: ${VERDICT[String(r.valid) as keyof typeof VERDICT]}`);
      lines.push(`  evidence: ${r.evidence}`);
      lines.push(`  scope: ${r.scope}`);
      if (r.error) lines.push(`  error: ${r.error}`);
      for (const a of r.anomalies.slice(0, 3)) lines.push(`  ${a.type}: ${a.explanation}`);
      if (r.anomalies.length > 3) lines.push(`  … ${r.anomalies.length - 3} more anomalies (--json for all)`);
      for (const f of r.artifacts ?? []) lines.push(`  artifact: ${f}`);
    }
    // A history with no client op is valid for every checker, but only vacuously: say so on the verdict line.
    const vacuous = run.results.length > 0 && run.results.every((r) => r.stats.vacuous === true);
    lines.push(
      `${VERDICT[String(valid) as keyof typeof VERDICT]}: ${opCount} ops in ${historyFile}, ${names.length} checker${names.length === 1 ? '' : 's'}${vacuous ? ' (vacuous: 0 client ops, nothing was checked)' : ''}`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  return valid === true ? EXIT.valid : valid === false ? EXIT.invalid : EXIT.unknown;
}
