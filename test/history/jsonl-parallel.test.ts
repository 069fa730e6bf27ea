import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import { EventColumnsDecoder, EventColumnsEncoder } from '../../src/core/history/event-columns.ts';
import { type JsonlReadOptions, readJsonlBatches, type TornTail } from '../../src/core/history/jsonl.ts';
import { parallelPays, readJsonlBatchesInWorker } from '../../src/core/history/jsonl-parallel.ts';
import {
  closeSegments,
  openSegments,
  readSegmentBytes,
  SegmentBuffer,
  segmentCount,
} from '../../src/core/history/jsonl-segments.ts';
import { PARALLEL_MIN_BYTES, readEventBatches } from '../../src/core/history/read.ts';

const dir = mkdtempSync(join(tmpdir(), 'faultline-jsonl-par-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function file(text: string | Buffer): string {
  const p = join(dir, `h${n++}.jsonl`);
  writeFileSync(p, text);
  return p;
}

/** Small segments, so a few kilobytes make many of them, owned by both threads. */
const SEGMENT = 1024;

/** A varied history: every field the columns carry, extra fields, unicode, long lines, the nemesis. */
function events(count: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const open = new Map<number, boolean>();
  for (let i = 0; i < count; i++) {
    const p = i % 7 === 3 ? 'nemesis' : i % 5;
    const invoking = p === 'nemesis' || !open.get(p as number);
    if (p !== 'nemesis') open.set(p, invoking);
    const e: Record<string, unknown> = {
      index: i,
      type: invoking ? (p === 'nemesis' ? 'info' : 'invoke') : ['ok', 'fail', 'info'][i % 3],
      f: ['read', 'write', 'cas', 'txn', 'start-partition'][i % 5],
      value: [
        null,
        i,
        [i % 4, (i + 1) % 4],
        `s${i % 9}é`,
        { k: [1, { x: 'y' }] },
        true,
        false,
        1.5e300,
        -0.25,
      ][i % 9],
      process: p,
      time: i * 1_000_003,
      node: i % 4 === 0 ? null : `n${i % 3}`,
      faultEpoch: i % 6 === 0 ? ['w1', `w${i % 3}`] : null,
    };
    if (i % 10 === 1) e.key = `k${i % 4}`;
    if (i % 11 === 2) e.error = i % 2 ? 'timeout' : { code: 503 };
    if (i % 13 === 4) e.intendedTime = i * 999;
    if (i % 17 === 5) e.extra = { nested: [1, 2] };
    if (i % 97 === 6) e.value = 'x'.repeat(3000); // a line longer than a segment
    if (i % 19 === 7) delete e.value; // read as null
    out.push(e);
  }
  return out;
}

const text = (evs: Record<string, unknown>[]) => evs.map((e) => `${JSON.stringify(e)}\n`).join('');

async function collect(
  gen: AsyncGenerator<HistoryEvent[]>,
): Promise<{ events: HistoryEvent[]; error?: string }> {
  const out: HistoryEvent[] = [];
  try {
    for await (const b of gen) for (const e of b) out.push(e);
  } catch (err) {
    return { events: out, error: (err as Error).message };
  }
  return { events: out };
}

async function both(p: string, opts: JsonlReadOptions = {}) {
  const seq = await collect(readJsonlBatches(p, opts));
  const par = await collect(readJsonlBatchesInWorker(p, statSync(p).size, opts, SEGMENT));
  return { seq, par };
}

test('the same events as the sequential reader, across many segments of both threads', async (t) => {
  const p = file(text(events(600)));
  t.true(statSync(p).size > 20 * SEGMENT);
  const { seq, par } = await both(p);
  t.is(seq.error, undefined);
  t.is(par.error, undefined);
  t.is(par.events.length, 600);
  t.deepEqual(par.events, seq.events);
});

test('blank lines, CRLF line ends and a last line without its newline read the same', async (t) => {
  const evs = events(200).map((e) => `${JSON.stringify(e)}\r\n`);
  evs.splice(50, 0, '\n', '   \n');
  const p = file(evs.join('').replace(/\r\n$/, ''));
  const { seq, par } = await both(p);
  t.is(seq.error, undefined);
  t.deepEqual(par.events, seq.events);
});

for (const at of [0, 1, 40, 41, 95, 150, 199]) {
  test(`a bad line at event ${at}: the same error, after the same events`, async (t) => {
    const lines = events(200).map((e) => JSON.stringify(e));
    lines[at] = '{"index": oops}';
    const p = file(`${lines.join('\n')}\n`);
    const { seq, par } = await both(p);
    t.truthy(seq.error);
    t.is(par.error, seq.error);
    // Whatever came before the error is a prefix of the valid lines before it.
    const valid = await collect(readJsonlBatches(file(lines.slice(0, at).join('\n') + (at > 0 ? '\n' : ''))));
    t.true(par.events.length <= at);
    t.deepEqual(par.events, valid.events.slice(0, par.events.length));
  });
}

for (const at of [37, 120]) {
  test(`an index gap at event ${at}: the same error naming the line`, async (t) => {
    const evs = events(200);
    for (let i = at; i < evs.length; i++) (evs[i] as { index: number }).index += 1;
    const p = file(text(evs));
    const { seq, par } = await both(p);
    t.regex(seq.error ?? '', /index: expected \d+/);
    t.is(par.error, seq.error);
  });
}

test('invalid UTF-8 in a later segment: the same error', async (t) => {
  const body = Buffer.from(text(events(300)));
  const at = body.indexOf('s4é', Math.floor(body.length * 0.7));
  body[at + 2] = 0xff;
  const p = file(body);
  const { seq, par } = await both(p);
  t.regex(seq.error ?? '', /invalid UTF-8/);
  t.is(par.error, seq.error);
});

test('a torn last line: the same error, or with drop the same report and events', async (t) => {
  const p = file(`${text(events(150))}{"index":150,"type":"inv`);
  const { seq, par } = await both(p);
  t.regex(seq.error ?? '', /torn last line/);
  t.is(par.error, seq.error);
  const torn: TornTail[] = [];
  const dropped = await both(p, { tornTail: 'drop', onTornTail: (x) => torn.push(x) });
  t.is(dropped.par.error, undefined);
  t.deepEqual(dropped.par.events, dropped.seq.events);
  t.is(torn.length, 2);
  t.deepEqual(torn[1], torn[0]);
});

/** Transactions in the scanner's grammar (./jsonl-scan.ts): most segments go through it. */
function plainEvents(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    f: 'txn',
    process: (i >> 1) % 5,
    node: null,
    faultEpoch: null,
    index: i,
    type: i % 2 ? 'ok' : 'invoke',
    value: [
      ['append', i % 7, i],
      ['r', i % 3, i % 2 ? [1, 2, i] : null],
    ],
    time: i * 1000,
  }));
}

test('scanned lines: the same events, and the same errors in a scanned segment', async (t) => {
  const good = file(text(plainEvents(600)));
  const ok = await both(good);
  t.is(ok.seq.error, undefined);
  t.deepEqual(ok.par.events, ok.seq.events);
  const lines = plainEvents(600).map((e) => JSON.stringify(e));
  const broken = [
    (l: string[]) => l.with(300, '{"index": oops}'),
    (l: string[]) => l.with(300, l[300]!.replace('"index":300', '"index":301')),
    (l: string[]) => l.with(300, l[300]!.replace('"type":"invoke"', '"type":"begin"')),
    (l: string[]) => l.with(300, l[300]!.replace('"node":null', '"node":"n\u00e9"')),
    (l: string[]) => l.with(300, l[300]!.replace('"time":300000', '"time":-1')),
  ];
  for (const make of broken) {
    const p = file(`${make(lines).join('\n')}\n`);
    const { seq, par } = await both(p);
    t.is(par.error, seq.error);
    if (seq.error === undefined) {
      // Valid but off the grammar (an escape): read the ordinary way, the same events.
      t.deepEqual(par.events, seq.events);
      t.is(seq.events[300]?.node, 'n\u00e9');
      continue;
    }
    // Whatever came before the error is a prefix of the valid events before it.
    t.true(par.events.length <= 300);
    t.deepEqual(par.events, ok.seq.events.slice(0, par.events.length));
  }
  const bytes = Buffer.from(text(plainEvents(600)));
  bytes[bytes.indexOf('"txn"', Math.floor(bytes.length * 0.6)) + 1] = 0xff;
  const utf8 = await both(file(bytes));
  t.regex(utf8.seq.error ?? '', /invalid UTF-8/);
  t.is(utf8.par.error, utf8.seq.error);
});

test('a missing file is the same one-line error', async (t) => {
  const p = join(dir, 'missing.jsonl');
  const seq = await collect(readJsonlBatches(p));
  const par = await collect(readJsonlBatchesInWorker(p, 10 * SEGMENT, {}, SEGMENT));
  t.is(par.error, seq.error);
});

test('a batch keeps its tree: values decoded as views after the next batch was encoded are still its own', (t) => {
  const txn = (i: number) => [
    ['append', i, i + 1],
    ['r', i + 2, [i, i + 3, i + 4]],
  ];
  const batch = (from: number) =>
    Array.from({ length: 50 }, (_, j) => ({
      index: from + j,
      time: from + j,
      type: 'ok',
      process: j % 5,
      f: 'txn',
      value: txn(from + j),
      node: null,
      faultEpoch: null,
    })) as unknown as HistoryEvent[];
  const enc = new EventColumnsEncoder();
  const dec = new EventColumnsDecoder(true);
  const first = enc.encode(batch(0));
  const second = enc.encode(batch(50));
  t.is(first.whole.length + second.whole.length, 0, 'every event in the columns, every value a tree');
  const values = [...dec.decode(first), ...dec.decode(second)].map((e) =>
    JSON.parse(JSON.stringify(e.value)),
  );
  t.deepEqual(
    values,
    [...batch(0), ...batch(50)].map((e) => e.value),
  );
});

test('the columns carry every field: encode then decode is the identity', (t) => {
  const evs = events(300) as unknown as HistoryEvent[];
  for (const e of evs) e.value ??= null;
  const enc = new EventColumnsEncoder();
  const dec = new EventColumnsDecoder();
  const half = evs.length / 2;
  t.deepEqual(
    [...dec.decode(enc.encode(evs.slice(0, half))), ...dec.decode(enc.encode(evs.slice(half)))],
    evs,
  );
});

test('readEventBatches parses in parallel only when asked and the file is large', async (t) => {
  const p = file(text(events(50)));
  const { events: small } = await collect(readEventBatches(p, { parallel: true }));
  t.is(small.length, 50);
  t.true(PARALLEL_MIN_BYTES >= 1 << 20);
});

test('two threads are used when values repeat or are compact lists, not for distinct objects or extra fields', (t) => {
  const base = (i: number, value: unknown, extra = {}) => ({
    index: i,
    type: i % 2 ? 'ok' : 'invoke',
    f: 'cas',
    value,
    process: (i >> 1) % 5,
    time: i,
    node: null,
    faultEpoch: null,
    ...extra,
  });
  const sized = (make: (i: number) => Record<string, unknown>) => {
    const p = file(text(Array.from({ length: 400 }, (_, i) => make(i))));
    return parallelPays(p, statSync(p).size, 8 * SEGMENT);
  };
  t.true(sized((i) => base(i, i % 3 ? i % 5 : [i % 5, (i + 1) % 5])));
  // Transactions: distinct, but they cross threads as compact trees, not as JSON text to parse again.
  t.true(
    sized((i) =>
      base(i, [
        ['append', i % 7, i],
        ['r', i % 3, null],
      ]),
    ),
  );
  t.false(sized((i) => base(i, { txn: [['append', i % 7, i]] })));
  t.false(sized((i) => base(i, [['append', i % 7, i + 0.5]])));
  t.false(sized((i) => base(i, 1, { intendedTime: i, extra: i })));
});

// The fast path (a block of lines parsed joined, in one JSON.parse, on either thread) against what
// reading the file line by line must give: the expected answers below are worked out from the lines
// themselves, not from the other reader, so a fast path both readers share that accepts a line off the
// grammar, loses a number's digits or names the wrong line fails them. The histories are cas-register
// histories, the shape `faultline check --checker linearizable` reads.

/** Line i (0-based) of a register history: invocations and completions of 10 processes. */
function line(i: number, value: unknown = i % 5): string {
  const invoke = i % 2 === 0;
  return JSON.stringify({
    index: i,
    type: invoke ? 'invoke' : 'ok',
    f: 'write',
    value,
    process: (i >> 1) % 10,
    time: i,
    node: null,
    faultEpoch: null,
  });
}

function lines(count: number): string[] {
  return Array.from({ length: count }, (_, i) => line(i));
}

/** What both readers give for the file (see `both`). */
async function readers(p: string, opts: JsonlReadOptions = {}) {
  const { seq, par } = await both(p, opts);
  return [seq, par];
}

/** The first line (1-based) that is not one JSON value on its own. */
function firstBadLine(ls: string[]): number {
  const k = ls.findIndex((l) => {
    try {
      JSON.parse(l);
      return false;
    } catch {
      return true;
    }
  });
  return k + 1;
}

/** A file where `at` lines from `at` on are replaced by `crafted`, with the indices after it shifted to fit. */
function crafted(at: number, make: (first: number) => string[]): string[] {
  const ls = lines(400);
  const middle = make(at);
  // The crafted lines hold 3 events over 3 lines; the lines after continue the indices.
  return [...ls.slice(0, at), ...middle, ...ls.slice(at + middle.length)];
}

/** Event `i` whose value `[1,2]` is split across two lines. */
function split(i: number): [string, string] {
  const whole = line(i, [1, 2]);
  const cut = whole.indexOf('[1,') + 2;
  return [whole.slice(0, cut), whole.slice(cut + 1)];
}

// A line worked out for the main thread (segment 0) and for the worker (a later segment).
for (const at of [3, 250]) {
  test(`a value split across lines, made up for by two events on one line, is refused (line ${at + 1})`, async (t) => {
    const ls = crafted(at, (i) => [...split(i), `${line(i + 1)},${line(i + 2)}`]);
    // Joined, these lines are valid events with the right indices: only line by line are they bad.
    const joined = JSON.parse(`[${ls.join(',')}]`) as { index: number }[];
    t.is(joined.length, ls.length);
    t.true(joined.every((e, k) => e.index === k));
    const p = file(`${ls.join('\n')}\n`);
    const bad = firstBadLine(ls);
    t.is(bad, at + 1);
    for (const r of await readers(p)) {
      t.regex(r.error ?? 'accepted', new RegExp(`^${p}:${bad}: bad JSON: `));
      t.true(r.events.length <= at);
    }
  });
}

test('two events on one line with whitespace around the comma are refused', async (t) => {
  const ls = crafted(300, (i) => [...split(i), `${line(i + 1)} ,\t${line(i + 2)}`]);
  const p = file(`${ls.join('\n')}\n`);
  for (const r of await readers(p)) t.regex(r.error ?? 'accepted', new RegExp(`^${p}:301: bad JSON: `));
});

test('lines that are bad JSON alone are named as bad JSON, not as what they join into', async (t) => {
  // `[event` / `event]` join into an array holding two events, and `5,6` into two values, so the
  // count of values is the count of lines: line 201 is bad JSON, not "not an object".
  const ls = lines(400);
  ls[200] = `[${ls[200]}`;
  ls[201] = `${ls[201]}]`;
  ls[300] = '5,6';
  const p = file(`${ls.join('\n')}\n`);
  for (const r of await readers(p)) t.regex(r.error ?? 'accepted', new RegExp(`^${p}:201: bad JSON: `));
});

test('an event that is not an object is named by its own line, on the worker thread', async (t) => {
  const ls = lines(400);
  ls[310] = '5';
  const p = file(`${ls.join('\n')}\n`);
  for (const r of await readers(p)) {
    t.is(r.error, `${p}:311: event: expected a JSON object, got 5`);
    t.deepEqual(
      r.events.map((e) => e.index),
      Array.from({ length: r.events.length }, (_, k) => k),
    );
  }
});

test('an index gap is named by its line and the expected index, on the worker thread', async (t) => {
  const ls = lines(400).map((l, i) => (i >= 333 ? l.replace(`"index":${i},`, `"index":${i + 1},`) : l));
  const p = file(`${ls.join('\n')}\n`);
  for (const r of await readers(p))
    t.is(r.error, `${p}:334: index: expected 333 (indices count 0, 1, 2, ...), got 334`);
});

test('an integer beyond 2^53 on either thread keeps every digit', async (t) => {
  const big = '12345678901234567890123';
  for (const at of [1, 280]) {
    const ls = lines(400);
    ls[at] = (ls[at] as string).replace(/"value":\d+/, `"value":[${big},2]`);
    const p = file(`${ls.join('\n')}\n`);
    for (const r of await readers(p)) {
      t.is(r.error, undefined);
      t.is(r.events.length, 400);
      t.deepEqual(r.events[at]?.value, [{ '#bigint': big }, 2]);
      t.is(r.events[at + 1]?.value, (at + 1) % 5, 'the events after it are read as usual');
    }
  }
});

test('a torn tail after a register history is named with its line and length', async (t) => {
  const ls = lines(400);
  const tail = '{"index":400,"type":"inv';
  const p = file(`${ls.join('\n')}\n${tail}`);
  for (const r of await readers(p)) {
    t.regex(
      r.error ?? 'accepted',
      new RegExp(`^${p}:401: torn last line \\(${tail.length} bytes, no newline\\): the writer was killed`),
    );
    t.is(r.events.length, 400);
  }
  for (const r of await readers(p, { tornTail: 'drop' })) {
    t.is(r.error, undefined);
    t.is(r.events.length, 400);
  }
});

test('segments read into one reused buffer are byte for byte those read into fresh ones, at every bound', (t) => {
  // Lines of a few bytes to 70 KB (longer than the probe past a bound, so some bounds are found by
  // reading on), a file not ending in a newline, and segment sizes from smaller than a line to larger
  // than the file.
  const lines: string[] = [];
  for (let i = 0; i < 400; i++)
    lines.push(i % 37 === 5 ? 'x'.repeat(70_000 + i) : `{"index":${i}}`.repeat(1 + (i % 9)));
  const text = `${lines.join('\n')}\ntail without newline`;
  const p = file(text);
  const size = statSync(p).size;
  const fd = openSegments(p);
  try {
    for (const segmentBytes of [700, 4096, 65_536, 100_000, size + 10]) {
      const reused = new SegmentBuffer();
      let covered = 0;
      for (let k = 0; k < segmentCount(size, segmentBytes); k++) {
        const fresh = readSegmentBytes(fd, p, k, size, segmentBytes);
        const into = readSegmentBytes(fd, p, k, size, segmentBytes, undefined, reused);
        t.is(into.begin, fresh.begin, `segment ${k} of ${segmentBytes}`);
        t.is(into.last, fresh.last, `segment ${k} of ${segmentBytes}`);
        t.true(into.bytes.equals(fresh.bytes), `segment ${k} of ${segmentBytes}`);
        covered += fresh.bytes.length;
      }
      t.is(covered, size, `the segments of ${segmentBytes} bytes cover the file`);
    }
    // A line over the cap across a bound: the same error either way.
    const capped = (into?: SegmentBuffer) =>
      t.throws(() => readSegmentBytes(fd, p, 1, size, 4096, 60_000, into));
    t.is(capped(new SegmentBuffer())?.message, capped()?.message);
  } finally {
    closeSegments(fd);
  }
});
