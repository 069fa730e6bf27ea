import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import { type JsonlReadOptions, readJsonlBatches } from '../../src/core/history/jsonl.ts';
import { readJsonlBatchesInWorker } from '../../src/core/history/jsonl-parallel.ts';

/**
 * The readers' fast path (a block of lines parsed joined, in one JSON.parse, on either reading thread)
 * against what reading the file line by line must give: the expected answers here are computed from
 * the lines themselves, not from another reader, so a fast path that accepts a line off the grammar,
 * loses a number's digits, or names the wrong line fails these tests even if both readers share it.
 * The histories are cas-register histories, the shape `faultline check --checker linearizable` reads.
 */

const dir = mkdtempSync(join(tmpdir(), 'faultline-jsonl-fast-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function file(text: string): string {
  const p = join(dir, `h${n++}.jsonl`);
  writeFileSync(p, text);
  return p;
}

/** Small segments: a few kilobytes make many, read by both threads (segment k by the worker unless k % 3 = 0). */
const SEGMENT = 1024;

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

async function read(
  gen: AsyncGenerator<HistoryEvent[]>,
): Promise<{ events: HistoryEvent[]; error?: string }> {
  const events: HistoryEvent[] = [];
  try {
    for await (const b of gen) for (const e of b) events.push(e);
  } catch (err) {
    return { events, error: (err as Error).message };
  }
  return { events };
}

/** Both readers of the file: sequential, and two threads with small segments. */
async function readers(p: string, opts: JsonlReadOptions = {}) {
  return [
    await read(readJsonlBatches(p, opts)),
    await read(readJsonlBatchesInWorker(p, statSync(p).size, opts, SEGMENT)),
  ];
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
