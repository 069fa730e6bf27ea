/**
 * A recorder for the write-before-ack test: drives ops through the run's own history sink as the
 * interpreter does (append the invoke, let the client answer, append the completion, then hand the
 * completion back) and prints `ack INDEX` when it hands a completion back, until the test SIGKILLs it.
 * stdout to a pipe is synchronous on Linux, so every `ack` the test reads was acknowledged before
 * the kill. Bounded: 20 s or 2M ops.
 * Usage: node --import=tsx ack-recorder.ts FILE [buffered]   (buffered: the writer without writeThrough)
 */
import { openHistorySink } from '../../../src/app/test/history-sink.ts';

const [file, mode] = process.argv.slice(2);
if (!file) throw new Error('usage: ack-recorder.ts FILE [buffered]');
const sink = await openHistorySink(file, { writeThrough: mode !== 'buffered' });
const deadline = Date.now() + 20_000;
let index = 0;
const op = async (process_: number, n: number) => {
  const invoke = { index: index++, type: 'invoke' as const, f: 'write', value: n, process: process_ };
  sink.append({ ...invoke, time: n, node: 'n1', faultEpoch: null });
  await new Promise((r) => setImmediate(r));
  const done = { ...invoke, index: index++, type: 'ok' as const, time: n + 1, node: 'n1', faultEpoch: null };
  sink.append(done);
  process.stdout.write(`ack ${done.index}\n`);
};
for (let n = 0; Date.now() < deadline && n < 2_000_000; n++) {
  await op(n % 8, n);
  if (sink.needsDrain) await sink.drain?.();
}
await sink.close();
