import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { RunClock } from '../../src/app/test/clock-readings.ts';
import {
  countFailovers,
  readPrimariesSamples,
  startPrimariesSampler,
} from '../../src/app/test/primaries-sampler.ts';

const at = (atS: number, ...primaries: string[]) => ({ atS, primaries });

test('failovers: a change to a different primary counts; an empty sample in between does not', (t) => {
  t.is(countFailovers([]), 0);
  t.is(countFailovers([at(0, 'n1'), at(1, 'n1'), at(2), at(3, 'n1')]), 0);
  t.is(countFailovers([at(0, 'n1'), at(1), at(2, 'n2')]), 1);
  t.is(countFailovers([at(0, 'n1'), at(1, 'n2'), at(2, 'n3'), at(3, 'n3')]), 2);
  t.is(countFailovers([at(0), at(1, 'n2')]), 0);
});

test('the sampler asks one question at a time, writes each answer, stops when told', async (t) => {
  const path = join(mkdtempSync(join(tmpdir(), 'flt-prim-')), 'primaries.jsonl');
  const answers = [['n1'], ['n1'], [], ['n2']];
  let asked = 0;
  let inFlight = 0;
  let overlap = false;
  const stop = startPrimariesSampler(
    path,
    new RunClock(),
    async () => {
      inFlight++;
      overlap ||= inFlight > 1;
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return answers[Math.min(asked++, answers.length - 1)] as string[];
    },
    10,
  );
  while (asked < 4) await new Promise((r) => setTimeout(r, 5));
  await stop();
  const samples = readPrimariesSamples(path) ?? [];
  t.false(overlap);
  t.true(samples.length >= 4, readFileSync(path, 'utf8'));
  t.deepEqual(
    samples.slice(0, 4).map((s) => s.primaries),
    answers,
  );
  t.is(countFailovers(samples), 1);
  t.true(samples.every((s, i) => i === 0 || s.atS >= (samples[i - 1]?.atS ?? 0)));
});
