import { InputError } from '../util/errors.ts';
import { EdnReader, EdnSyntaxError, END } from './edn.ts';
import type { HistoryEvent } from './event.ts';
import { ABSENT } from './event.ts';
import { utf8Chunks } from './utf8.ts';

/**
 * Porcupine's Jepsen etcd logs: console lines `INFO  jepsen.util - <process> <type> <f> <value>`
 * (tabs or spaces). Lines without `jepsen.util -` are other log output and are skipped; a
 * `jepsen.util -` line that does not parse is an error.
 *
 * Mapping: a completion whose value is `:timed-out` carries no value: it becomes `error: "timed-out"`,
 * `value: null` (for `:fail :read :timed-out` that is the read's "unknown output"; for `:info` it is the
 * usual indeterminate op). There are no times: `time` is the event's position, and `#absent` says so.
 */
const LINE = /^\s*\S*\s*INFO\s+jepsen\.util\s+-\s+(\d+)\s+:(invoke|ok|fail|info)\s+:(\S+)\s*(.*?)\s*$/;

export function parsePorcupineEtcd(text: string, file: string): HistoryEvent[] {
  const out: HistoryEvent[] = [];
  let lineNo = 0;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const ev = etcdEvent(text.slice(start, end), file, ++lineNo, out.length);
    if (ev) out.push(ev);
    start = end + 1;
  }
  return out;
}

/**
 * Streams an etcd log in chunks of lines, so memory stays that of one chunk and its events (the same
 * as the JSONL reader) whatever the log's size.
 */
export async function* readPorcupineEtcdBatches(
  file: string,
  chunkSize = 1 << 16,
): AsyncGenerator<HistoryEvent[]> {
  let carry = '';
  let lineNo = 0;
  let index = 0;
  try {
    for await (const chunk of utf8Chunks(file, chunkSize)) {
      const text = carry + chunk;
      const batch: HistoryEvent[] = [];
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        const ev = etcdEvent(text.slice(start, end), file, ++lineNo, index);
        if (ev) {
          batch.push(ev);
          index++;
        }
        start = end + 1;
      }
      carry = text.slice(start);
      if (batch.length > 0) yield batch;
    }
  } finally {
  }
  const last = carry.length > 0 ? etcdEvent(carry, file, ++lineNo, index) : undefined;
  if (last) yield [last];
}

/** One log line as an event (index and time `index`), or undefined for other log output. */
function etcdEvent(line: string, file: string, lineNo: number, index: number): HistoryEvent | undefined {
  if (!line.includes('jepsen.util -')) return undefined;
  const m = LINE.exec(line);
  if (!m)
    throw new InputError(
      file,
      lineNo,
      null,
      'not a Jepsen op line: expected "INFO jepsen.util - PROCESS :TYPE :F VALUE"',
    );
  const [, proc, type, f, valueText] = m;
  let value: unknown = null;
  if (valueText) {
    try {
      const r = new EdnReader(valueText, 'plain');
      value = r.read();
      const after = r.skip();
      if (after !== END) throw new EdnSyntaxError(1, r.pos, 'more than one value');
    } catch (err) {
      const reason = err instanceof EdnSyntaxError ? err.reason : String(err);
      throw new InputError(file, lineNo, 'value', `bad EDN value '${valueText}': ${reason}`);
    }
  }
  const ev: HistoryEvent = {
    index,
    type: type as HistoryEvent['type'],
    f: f as string,
    value,
    process: Number(proc),
    time: index,
    node: null,
    faultEpoch: null,
  };
  if (type !== 'invoke' && value === 'timed-out') {
    ev.value = null;
    ev.error = 'timed-out';
  }
  (ev as Record<string, unknown>)[ABSENT] = ['time'];
  return ev;
}
