import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import test from 'ava';
import { execa } from 'execa';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import type { TornTail } from '../../src/core/history/jsonl.ts';
import { loadHistory } from '../../src/core/history/read.ts';
import { HistoryWriter } from '../../src/core/history/writer.ts';

const dir = mkdtempSync(join(tmpdir(), 'faultline-writer-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const crashWriter = new URL('./helpers/crash-writer.ts', import.meta.url).pathname;
const ackRecorder = new URL('./helpers/ack-recorder.ts', import.meta.url).pathname;

const base = (i: number): Omit<HistoryEvent, 'index'> => ({
  type: i % 2 ? 'ok' : 'invoke',
  f: 'read',
  value: i,
  process: 0,
  time: i,
  node: null,
  faultEpoch: null,
});

test('batches are written and fsynced by count', async (t) => {
  const synced: number[] = [];
  let wake: (() => void) | undefined;
  const p = join(dir, 'count.jsonl');
  const w = await HistoryWriter.open(p, {
    syncEvery: 10,
    syncIntervalMs: 60_000,
    onSynced: (n) => {
      synced.push(n);
      wake?.();
    },
  });
  for (let i = 0; i < 25; i++) {
    w.record(base(i));
    // A full batch goes to the disk as soon as the event loop gets control; wait for it.
    if (i % 10 === 9) await new Promise<void>((r) => (wake = r));
  }
  await new Promise((r) => setTimeout(r, 50));
  t.deepEqual(synced, [10, 20], 'two full batches, the last 5 still pending');
  t.is(w.durableCount, 20);
  t.is(w.backlog, 5);
  await w.close();
  t.deepEqual(synced, [10, 20, 25]);
  t.is((await loadHistory(p)).length, 25);
});

test('a partial batch is written after the interval', async (t) => {
  const p = join(dir, 'interval.jsonl');
  const w = await HistoryWriter.open(p, { syncEvery: 1000, syncIntervalMs: 20 });
  for (let i = 0; i < 3; i++) w.record(base(i));
  t.is(w.durableCount, 0);
  // Well under syncEvery, so only the interval can have flushed them (poll: the machine may be busy).
  for (let waited = 0; w.durableCount < 3 && waited < 10_000; waited += 20) {
    await new Promise((r) => setTimeout(r, 20));
  }
  t.is(w.durableCount, 3);
  t.is(readFileSync(p, 'utf8').split('\n').length, 4);
  await w.close();
});

test('bad events and out-of-order indices are refused at append', async (t) => {
  const w = await HistoryWriter.open(join(dir, 'bad.jsonl'));
  t.throws(() => w.append({ ...base(0), index: 0, type: 'done' } as unknown as HistoryEvent), {
    message: /type: expected one of/,
  });
  t.throws(() => w.append({ ...base(0), index: 1 } as HistoryEvent), {
    message: 'history event index 1, expected 0',
  });
  w.append({ ...base(0), index: 0, value: undefined } as HistoryEvent);
  await w.close();
  t.is((await loadHistory(join(dir, 'bad.jsonl')))[0]!.value, null, 'undefined value is written as null');
  t.throws(() => w.record(base(1)), { message: /closed/ });
});

test('an existing history is never overwritten unless asked', async (t) => {
  const p = join(dir, 'exists.jsonl');
  writeFileSync(p, '');
  await t.throwsAsync(HistoryWriter.open(p), { code: 'EEXIST' });
  const w = await HistoryWriter.open(p, { mode: 'truncate' });
  await w.close();
});

test('crash: SIGKILL mid-stream loses nothing fsynced, and a torn tail is flagged', async (t) => {
  const p = join(dir, 'crash.jsonl');
  const child = spawn(process.execPath, ['--import=tsx', crashWriter, p, '400'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let lastSynced = 0;
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, sig) => resolve(sig)),
  );
  await new Promise<void>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error('writer never reached 20000 synced events')), 60_000);
    rl.on('line', (line) => {
      const m = /^synced (\d+)$/.exec(line);
      if (m) lastSynced = Number(m[1]);
      if (lastSynced >= 20_000) {
        clearTimeout(timer);
        child.kill('SIGKILL');
        resolve();
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  t.is(await exited, 'SIGKILL', 'the writer was killed, not finished');

  const torn: TornTail[] = [];
  const recovered = await loadHistory(p, { tornTail: 'drop', onTornTail: (x) => torn.push(x) });
  t.true(recovered.length >= lastSynced, `recovered ${recovered.length} ≥ ${lastSynced} fsynced`);
  for (const [i, ev] of recovered.entries()) {
    if ((ev.value as { n: number }).n !== (i % 2 === 0 ? i : i - 1)) t.fail(`event ${i} damaged`);
  }
  const text = readFileSync(p, 'utf8');
  t.is(torn.length, text.endsWith('\n') ? 0 : 1, 'a torn tail is reported exactly when the file has one');

  // Tear the last line for certain (as a kill inside write() would) and read again.
  const size = statSync(p).size;
  const lastLineStart = text.lastIndexOf('\n', text.length - 2) + 1;
  truncateSync(p, lastLineStart + 40);
  t.true(statSync(p).size < size);
  const completeLines = text.slice(0, lastLineStart).split('\n').length - 1;

  const strict = await execa('node', [bin, 'history', 'stats', p], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
  });
  t.is(strict.exitCode, 254);
  t.regex(
    strict.stderr.trim(),
    new RegExp(
      `^faultline: .*crash\\.jsonl:${completeLines + 1}: torn last line \\(40 bytes, no newline\\)[^\\n]*$`,
    ),
  );

  const lenient = await execa('node', [bin, 'history', 'stats', p, '--allow-torn-tail', '--json'], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
  });
  t.is(lenient.exitCode, 0);
  const s = JSON.parse(lenient.stdout) as { events: { total: number }; tornTail: TornTail };
  t.is(s.events.total, completeLines);
  t.deepEqual(s.tornTail, { line: completeLines + 1, bytes: 40 });
});

/**
 * Runs the ack recorder (./helpers/ack-recorder.ts), SIGKILLs it once it has acknowledged `acks` ops,
 * and returns the acknowledged completion indices the history lacks.
 */
async function killAfterAcks(
  name: string,
  acks: number,
  mode: 'write-through' | 'buffered',
): Promise<number[]> {
  const p = join(dir, name);
  const child = spawn(
    process.execPath,
    ['--import=tsx', ackRecorder, p, mode === 'buffered' ? 'buffered' : ''],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_c, sig) => resolve(sig)),
  );
  const acked: number[] = [];
  await new Promise<void>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`the recorder never acknowledged ${acks} ops`)), 120_000);
    rl.on('line', (line) => {
      const m = /^ack (\d+)$/.exec(line);
      if (m) acked.push(Number(m[1]));
      if (acked.length === acks) {
        clearTimeout(timer);
        child.kill('SIGKILL');
      }
    });
    // Every ack written before the kill is read before the pipe closes.
    rl.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  if ((await exited) !== 'SIGKILL') throw new Error('the recorder was not killed');
  const recorded = new Set(
    (await loadHistory(p, { tornTail: 'drop' })).filter((e) => e.type === 'ok').map((e) => e.index),
  );
  return acked.filter((i) => !recorded.has(i));
}

test('write-before-ack: kill -9 of the recorder loses no op it acknowledged', async (t) => {
  for (const [k, acks] of [3000, 20_000, 45_000].entries()) {
    const lost = await killAfterAcks(`ack-${k}.jsonl`, acks, 'write-through');
    t.deepEqual(lost, [], `killed after ${acks} acks: acknowledged ops missing from the history`);
  }
  // The control: the same recorder buffering lines until the batch (the writer before writeThrough)
  // loses acknowledged ops to the same kill, so this test can tell the two apart.
  let lost: number[] = [];
  for (let attempt = 0; attempt < 3 && lost.length === 0; attempt++)
    lost = await killAfterAcks(`ack-buffered-${attempt}.jsonl`, 20_000, 'buffered');
  t.true(lost.length > 0, 'buffered lines lose acknowledged ops to kill -9');
  t.log(`buffered writer: ${lost.length} acknowledged ops lost to kill -9`);
});
