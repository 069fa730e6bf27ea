// The floor for `faultline check FILE` on a JSONL history: read the file and JSON.parse it line by line,
// nothing else (no validation, pairing or check), in plain Node on one thread. Prints the line count.
// Used by bench/cli.ts, which runs it alternately with the CLI on the same file.
import { closeSync, openSync, readSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node bench/floor-jsonl.mjs FILE\n');
  process.exit(254);
}
const fd = openSync(file, 'r');
const chunk = Buffer.allocUnsafe(1 << 20);
const decoder = new TextDecoder();
let rest = '';
let lines = 0;
for (;;) {
  const n = readSync(fd, chunk, 0, chunk.length, null);
  const text = rest + decoder.decode(chunk.subarray(0, n), { stream: n > 0 });
  let start = 0;
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
    if (nl > start) {
      JSON.parse(text.slice(start, nl));
      lines++;
    }
    start = nl + 1;
  }
  rest = text.slice(start);
  if (n === 0) break;
}
if (rest.length > 0) {
  JSON.parse(rest);
  lines++;
}
closeSync(fd);
process.stdout.write(`${lines}\n`);
