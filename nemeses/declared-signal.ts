import { clusterAddress } from '../src/core/control/addresses.ts';
import { shellQuote } from '../src/core/control/quote.ts';
import type { Remote } from '../src/core/control/types.ts';
import { databaseWith, type FaultTarget } from '../src/core/database/capabilities.ts';
import type { FaultRecord } from './types.ts';

/**
 * The landing signal a plan declares for its scenario (its §7.M "Nemesis + landing evidence" field),
 * when it names something the engine can read: a command run on the fault's nodes, a metric scraped on
 * them, or a pattern counted in the database's logs there. Read before the fault, while it holds and
 * after heal, and recorded with the fault's own evidence; a declared signal that does not move means the
 * fault is not proven (the plan said what landing looks like).
 */
export type DeclaredSignal =
  | {
      type: 'command';
      command: string;
      only: string | null;
      text: string;
      /**
       * Why the command is not run, when it is not: a plan is data, and this is a shell command run with
       * sudo on the nodes, so it runs only when the operator trusts the plan's commands.
       */
      refused?: string;
    }
  | { type: 'metric'; name: string; url: string; only: string | null; text: string }
  | { type: 'log'; pattern: string; only: string | null; text: string };

/** What reading a declared signal needs besides the nodes: where the database logs. */
/** One reading on one node: a command's output, a metric's value, a count of log lines. */
export type Reading = string | number;

/** Does this signal apply to the fault (its `(kind or action)` qualifier, when it has one)? */
export function appliesTo(s: DeclaredSignal, record: Pick<FaultRecord, 'spec'>): boolean {
  return s.only === null || s.only === record.spec.kind || s.only === record.spec.action;
}

const MARK = 'FLDECL';

/** Prometheus text: the sum of every sample of `name` (any labels). */
export function metricValue(text: string, name: string): number | null {
  let sum: number | null = null;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest !== '' && !rest.startsWith('{') && !rest.startsWith(' ')) continue;
    const v = Number(line.trim().split(/\s+/).at(-1));
    if (Number.isFinite(v)) sum = (sum ?? 0) + v;
  }
  return sum;
}

function commandFor(s: DeclaredSignal, remote: Remote, node: string, sut: FaultTarget | undefined): string {
  // `{address}`: the node's cluster address, where a database listening on that address alone answers.
  if (s.type === 'command')
    return `{ ${s.command.replaceAll('{node}', node).replaceAll('{address}', clusterAddress(remote.node(node)))} ; } 2>&1 | head -c 2000; echo " ${MARK} rc=$?"`;
  if (s.type === 'metric') {
    const url = s.url.replaceAll('{address}', clusterAddress(remote.node(node))).replaceAll('{node}', node);
    return `curl -sS -m 3 ${shellQuote(url)} 2>&1; echo " ${MARK} rc=$?"`;
  }
  const logs = databaseWith(sut, 'logs');
  const files = logs ? logs.db.logFiles(logs.ctx, node) : [];
  if (files.length === 0) return `echo "no log files"; echo " ${MARK} rc=1"`;
  return `cat ${files.map(shellQuote).join(' ')} 2>/dev/null | grep -c -E ${shellQuote(s.pattern)}; echo " ${MARK} rc=0"`;
}

function parse(s: DeclaredSignal, out: string): Reading {
  const m = new RegExp(`\\s*${MARK} rc=(\\d+)\\s*$`).exec(out);
  const body = (m ? out.slice(0, m.index) : out).trim();
  const rc = m ? Number(m[1]) : -1;
  if (s.type === 'command') return `exit ${rc}: ${body.slice(0, 200)}`;
  if (s.type === 'metric') {
    if (rc !== 0) return `unreadable (curl exit ${rc}: ${body.slice(0, 120)})`;
    return metricValue(body, s.name) ?? `no sample of ${s.name}`;
  }
  const n = Number.parseInt(body.split('\n').at(-1) ?? '', 10);
  return Number.isFinite(n) ? n : `unreadable: ${body.slice(0, 120)}`;
}

/** Read the signal on each node (never throws: an unreadable signal is recorded as such). */
export async function readDeclared(
  remote: Remote,
  s: DeclaredSignal,
  nodes: readonly string[],
  sut: FaultTarget | undefined,
): Promise<Record<string, Reading>> {
  if (s.type === 'command' && s.refused !== undefined) {
    const reading = `not run: ${s.refused}`;
    return Object.fromEntries(nodes.map((node) => [node, reading]));
  }
  const entries = await Promise.all(
    nodes.map(async (node): Promise<[string, Reading]> => {
      try {
        const r = await remote.exec(node, commandFor(s, remote, node, sut), {
          sudo: true,
          check: false,
          timeoutMs: 30_000,
        });
        return [node, parse(s, `${r.stdout}${r.stderr}`)];
      } catch (err) {
        return [node, `unreadable: ${(err as Error).message}`];
      }
    }),
  );
  return Object.fromEntries(entries);
}

/**
 * Did the signal move while the fault held? A log pattern or a metric must change in number; a
 * command's output must differ. An unreadable reading never counts as moved.
 */
export function moved(s: DeclaredSignal, before: Reading | undefined, during: Reading | undefined): boolean {
  if (before === undefined || during === undefined) return false;
  if (s.type === 'log') return typeof before === 'number' && typeof during === 'number' && during > before;
  if (s.type === 'metric')
    return typeof before === 'number' && typeof during === 'number' && during !== before;
  return before !== during;
}
