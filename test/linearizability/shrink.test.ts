import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { linearizabilityChecker } from '../../checkers/linearizability/index.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { parseHistoryText } from '../../src/core/history/read-foreign.ts';
import { history } from './helpers.ts';

test('a linearizability FAIL carries its 1-minimal failing sub-history, written for faultline check', async (t) => {
  // Noise around a stale read: writes 1, 2, reads that agree, then a read of 1 after 2 was acked.
  const ops = history([
    [0, 'invoke', 'write', 1],
    [0, 'ok', 'write', 1],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 1],
    [2, 'invoke', 'write', 3],
    [2, 'ok', 'write', 3],
    [0, 'invoke', 'write', 2],
    [0, 'ok', 'write', 2],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 2],
    [2, 'invoke', 'read', null],
    [2, 'ok', 'read', 1],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 2],
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'shrink-'));
  try {
    const r = await linearizabilityChecker.check(ops, { model: 'register' }, { outDir: dir });
    t.is(r.valid, false);
    const m = r.stats.minimalHistory as {
      ops: number;
      of: number;
      minimal: boolean;
      invokeIndices: number[];
    };
    // A read of 2 alone would fail too, but only because its write was dropped: that is no core.
    t.is(m.of, 7);
    t.true(m.minimal);
    // Several cores of three ops exist (write 1, write 2, read 1; or reads of 1, 2, 1 in turn, which need
    // two writes of 1 where there is one); ddmin finds one of them.
    t.is(m.invokeIndices.length, 3);
    t.regex(r.evidence, /; minimal failing sub-history: 3 of 7 ops \(1-minimal\): ops \d+, \d+, \d+$/);
    t.deepEqual(r.anomalies[0]?.minimalOps, m.invokeIndices);
    const file = join(dir, 'minimal-history.jsonl');
    t.true(r.artifacts?.includes(file));
    // The file is a history on its own, and it fails on its own.
    const sub = pairEvents(parseHistoryText(readFileSync(file, 'utf8'), 'jsonl', file)).ops;
    t.is(sub.length, 3);
    const again = await linearizabilityChecker.check(sub, { model: 'register' });
    t.is(again.valid, false);
    t.true((again.stats.minimalHistory as { ops: number }).ops <= 3);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
