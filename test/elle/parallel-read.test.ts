import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { elleChecker } from '../../checkers/elle/index.ts';
import { type SimIsolation, simulateEvents } from '../../checkers/elle/simulate.ts';
import { CompactValue } from '../../src/core/history/compact-value.ts';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import { eventLine, readJsonlBatches } from '../../src/core/history/jsonl.ts';
import { readJsonlBatchesInWorker } from '../../src/core/history/jsonl-parallel.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { pairEventStream } from '../../src/core/history/pair.ts';

/**
 * `faultline check --checker elle` on a large file reads it on two threads, the lines scanned straight
 * into columns (src/core/history/jsonl-scan.ts). Elle's verdict, anomalies, explanations and shrunk
 * sub-history must be exactly those of the one-thread reader, on histories of every simulated isolation,
 * with corrupted reads, and with lines off the scanner's grammar mixed in.
 */

const dir = mkdtempSync(join(tmpdir(), 'faultline-elle-par-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

/** Small segments so a few hundred transactions make dozens of them, on both threads. */
const SEGMENT = 4096;

function historyFile(name: string, isolation: SimIsolation, seed: number, corrupt: boolean): string {
  const lines: string[] = [];
  let k = 0;
  simulateEvents(
    { isolation, txns: 600, concurrency: 6, seed, activeKeys: 5, infoRate: 0.05 },
    (ev: HistoryEvent) => {
      k++;
      if (corrupt && ev.type === 'ok' && k % 23 === 0) {
        // A read that saw an element nobody appended, or lost one it should have seen.
        for (const mop of ev.value as unknown[][]) {
          if (mop[0] === 'r' && Array.isArray(mop[2])) {
            mop[2] = k % 2 ? [...(mop[2] as number[]), 9999] : (mop[2] as number[]).slice(1);
            break;
          }
        }
      }
      let line = eventLine(ev);
      // Lines off the scanner's grammar, read the ordinary way (whitespace, an extra field, an escape).
      if (k % 401 === 0) line = line.replace('"time":', '"time": ');
      if (k % 503 === 0) line = line.replace('"time":', '"extra":{"a":[1.5]},"time":');
      if (k % 607 === 0) line = line.replace('"f":"txn"', '"f":"t\\u0078n"');
      lines.push(line);
    },
  );
  const p = join(dir, `${name}.jsonl`);
  writeFileSync(p, lines.join(''));
  return p;
}

/**
 * Elle's result over a reader, streamed as the CLI streams it, with the file read again to shrink;
 * `compact` (when given) is the reader of the streamed pass, whose values may stay compact trees.
 */
async function check(
  read: () => AsyncGenerator<HistoryEvent[]>,
  compact?: () => AsyncGenerator<HistoryEvent[]>,
) {
  const options = { workload: 'list-append' as const, consistencyModels: ['strict-serializable'] };
  const feed = (add: (op: Operation) => void) => pairEventStream(read(), add);
  const sink = await elleChecker.stream(options, { replay: feed });
  let trees = 0;
  await pairEventStream((compact ?? read)(), (op) => {
    if (op.output instanceof CompactValue || op.input instanceof CompactValue) trees++;
    sink.add(op);
  });
  const r = await sink.finish();
  const { seconds: _s, phaseSeconds: _p, ...stats } = r.stats;
  return { result: { ...r, stats }, trees };
}

for (const isolation of ['serializable', 'snapshot-isolation', 'read-committed'] as const) {
  for (const corrupt of [false, true]) {
    test(`${isolation}${corrupt ? ' with corrupted reads' : ''}: two threads give the one-thread result`, async (t) => {
      const p = historyFile(`${isolation}-${corrupt}`, isolation, 7, corrupt);
      const size = statSync(p).size;
      t.true(size > 20 * SEGMENT, 'many segments');
      const one = await check(() => readJsonlBatches(p));
      const two = await check(() => readJsonlBatchesInWorker(p, size, {}, SEGMENT));
      // Elle's builder taking the transactions from the compact trees, as the CLI has it do.
      const trees = await check(
        () => readJsonlBatchesInWorker(p, size, {}, SEGMENT),
        () => readJsonlBatchesInWorker(p, size, { compactValues: true }, SEGMENT),
      );
      if (corrupt || isolation !== 'serializable') t.is(one.result.valid, false);
      t.is(one.trees + two.trees, 0);
      t.true(trees.trees > 500, `${trees.trees} ops with compact values`);
      t.deepEqual(two.result, one.result);
      t.deepEqual(trees.result, one.result);
    });
  }
}
