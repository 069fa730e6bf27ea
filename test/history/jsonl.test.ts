import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { historyEventSchema } from '../../src/core/history/event-schema.ts';
import type { TornTail } from '../../src/core/history/jsonl.ts';
import { loadHistory, readEvents } from '../../src/core/history/read.ts';
import { checkEvent } from '../../src/core/history/validate.ts';
import { InputError } from '../../src/core/util/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'faultline-jsonl-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function file(text: string): string {
  const p = join(dir, `h${n++}.jsonl`);
  writeFileSync(p, text);
  return p;
}

const ev = (i: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    index: i,
    type: i % 2 ? 'ok' : 'invoke',
    f: 'read',
    value: null,
    process: 0,
    time: i * 10,
    node: 'n1',
    faultEpoch: null,
    ...extra,
  });

test('reads events, keeps extra fields verbatim, fills a missing value with null', async (t) => {
  const p = file(`${ev(0, { extra: { a: [1] } })}\n${ev(1, { value: undefined })}\n`);
  const events = await loadHistory(p);
  t.is(events.length, 2);
  t.deepEqual((events[0] as Record<string, unknown>).extra, { a: [1] });
  t.is(events[1]!.value, null);
});

async function errorOf(text: string, opts = {}): Promise<string> {
  const p = file(text);
  const err = await (async () => {
    try {
      for await (const _ of readEvents(p, { format: 'jsonl', ...opts })) {
        // consume
      }
    } catch (e) {
      return e;
    }
    return undefined;
  })();
  if (!(err instanceof InputError)) throw new Error(`expected an InputError, got ${String(err)}`);
  return err.message.slice(p.length);
}

test('every malformed line is reported as file:line: field: reason', async (t) => {
  t.regex(await errorOf(`${ev(0)}\n{"index": 1, oops}\n`), /^:2: bad JSON: /);
  t.is(
    await errorOf(`${ev(0)}\n${ev(1, { type: 'done' })}\n`),
    ':2: type: expected one of invoke, ok, fail, info, got "done"',
  );
  t.is(
    await errorOf(`${ev(0, { process: undefined })}\n`),
    ':1: process: missing (expected a non-negative integer below 2^53 or "nemesis")',
  );
  t.is(
    await errorOf(`${ev(0, { time: -1 })}\n`),
    ':1: time: expected a non-negative number of nanoseconds, got -1',
  );
  t.is(await errorOf(`${ev(0, { node: 3 })}\n`), ':1: node: expected a string or null, got 3');
  t.is(await errorOf(`${ev(0, { faultEpoch: ['w1', 2] })}\n`), ':1: faultEpoch[1]: expected a string, got 2');
  t.is(await errorOf(`${ev(0)}\n${ev(2)}\n`), ':2: index: expected 1 (indices count 0, 1, 2, ...), got 2');
  t.is(await errorOf('[1,2]\n'), ':1: event: expected a JSON object, got [1,2]');
});

test('a torn last line is an error by default and reported (never silently kept) when dropped', async (t) => {
  const text = `${ev(0)}\n${ev(1)}\n${ev(2).slice(0, 25)}`;
  t.regex(
    await errorOf(text),
    /^:3: torn last line \(25 bytes, no newline\): the writer was killed mid-write; bad JSON/,
  );
  const torn: TornTail[] = [];
  const events = await loadHistory(file(text), { tornTail: 'drop', onTornTail: (x) => torn.push(x) });
  t.is(events.length, 2);
  t.deepEqual(torn, [{ line: 3, bytes: 25 }]);
});

test('a complete last event without its newline is kept', async (t) => {
  const events = await loadHistory(file(`${ev(0)}\n${ev(1)}`));
  t.is(events.length, 2);
});

test('a broken line that is not the last is corruption, even with tornTail: drop', async (t) => {
  t.regex(
    await errorOf(`${ev(0)}\n${ev(1).slice(0, 10)}\n${ev(2)}\n`, { tornTail: 'drop' }),
    /^:2: bad JSON/,
  );
});

test('lines split across read chunks are reassembled, and multi-byte characters survive', async (t) => {
  const lines: string[] = [];
  for (let i = 0; i < 300; i++) lines.push(ev(i, { note: `é→${'x'.repeat(i % 37)}` }));
  const p = file(`${lines.join('\n')}\n`);
  const events: unknown[] = [];
  for await (const e of readEvents(p, { format: 'jsonl', chunkSize: 61 })) events.push(e);
  t.is(events.length, 300);
  t.is((events[299] as { note: string }).note, `é→${'x'.repeat(299 % 37)}`);
});

test('a missing file is a one-line input error', async (t) => {
  await t.throwsAsync(loadHistory(join(dir, 'nope.jsonl'), { format: 'jsonl' }), {
    instanceOf: InputError,
    message: /nope\.jsonl: no such file$/,
  });
});

test('property: the fast check accepts exactly what the zod schema accepts', (t) => {
  const anyish = fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.integer({ min: -3, max: 5 }),
    fc.double(),
    fc.constantFrom('invoke', 'ok', 'fail', 'info', 'nemesis', 'x', ''),
    fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 2 }),
    fc.boolean(),
  );
  const candidate = fc.record(
    {
      index: anyish,
      type: anyish,
      f: anyish,
      value: anyish,
      process: anyish,
      time: anyish,
      node: anyish,
      key: anyish,
      error: anyish,
      faultEpoch: anyish,
    },
    { requiredKeys: [] },
  );
  // Random records are almost never valid but for one field, where the two are most likely to part: so half
  // the candidates are a valid event with each field kept, dropped or replaced.
  const valid: Record<string, unknown> = {
    index: 3,
    type: 'ok',
    f: 'read',
    value: [1, 2],
    process: 1,
    time: 10,
    node: 'n1',
    key: 'k',
    error: 'e',
    faultEpoch: ['w1'],
  };
  const nearValid = fc
    .record(Object.fromEntries(Object.keys(valid).map((k) => [k, fc.nat({ max: 5 })])), { requiredKeys: [] })
    .chain((how) =>
      fc.tuple(...Object.keys(valid).map(() => anyish)).map((others) => {
        const o: Record<string, unknown> = {};
        Object.keys(valid).forEach((k, i) => {
          const h = how[k];
          if (h === undefined) return; // dropped
          o[k] = h === 0 ? others[i] : valid[k];
        });
        return o;
      }),
    );
  fc.assert(
    fc.property(fc.oneof(candidate, nearValid), (o) => {
      const ours = checkEvent(o) === null;
      const zods = historyEventSchema.safeParse(o).success;
      if (ours !== zods) throw new Error(`disagree on ${JSON.stringify(o)}: fast=${ours} zod=${zods}`);
    }),
    { numRuns: 3000 },
  );
  t.pass();
});
