/**
 * A history writer for the crash test: appends events as fast as it can (bounded: 20 s or 3M events)
 * and prints `synced N` after every durable batch, until the test SIGKILLs it.
 * Usage: node --import=tsx crash-writer.ts FILE SYNC_EVERY
 */
import { HistoryWriter } from '../../../src/core/history/writer.ts';

const [file, syncEvery] = process.argv.slice(2);
if (!file) throw new Error('usage: crash-writer.ts FILE SYNC_EVERY');
const writer = await HistoryWriter.open(file, {
  syncEvery: Number(syncEvery ?? 500),
  syncIntervalMs: 5,
  onSynced: (n) => process.stdout.write(`synced ${n}\n`),
});
const deadline = Date.now() + 20_000;
let i = 0;
while (Date.now() < deadline && i < 3_000_000) {
  for (let j = 0; j < 250; j++, i++) {
    const invoke = i % 2 === 0;
    writer.record({
      type: invoke ? 'invoke' : 'ok',
      f: 'write',
      value: { n: invoke ? i : i - 1, pad: 'p'.repeat(120) },
      process: (i >> 1) % 16,
      time: i * 1000,
      node: 'n1',
      faultEpoch: null,
    });
  }
  await new Promise((r) => setImmediate(r));
}
await writer.close();
