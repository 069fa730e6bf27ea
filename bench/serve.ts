import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/app/sessions/serve.ts';
import { generateStore } from '../test/helpers/store.ts';

/**
 * `npm run bench:serve`: time to the first page of `faultline serve` over a generated store of 1,000
 * sessions (10 plans × 100 nights, 3 rows each), cold (every report.json read) and warm (the index
 * cache), and the page size.
 */
const root = mkdtempSync(join(tmpdir(), 'fl-bench-serve-'));
generateStore(root, {
  names: Array.from({ length: 10 }, (_, i) => `plan-${i}`),
  perName: 100,
  rowOf: (_n, night, row) =>
    row === 'S3' && night % 7 === 0
      ? { verdict: 'FAIL-reproducible' }
      : { verdict: 'PASS-smoke', opsPerSec: 40 + (night % 9) },
});
const server = await startServer(root, { port: 0, host: '127.0.0.1', last: 30 });
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
for (const label of ['cold (first page after start)', 'warm (index cache)']) {
  const t0 = performance.now();
  const body = await (await fetch(url)).text();
  const ms = performance.now() - t0;
  console.log(
    `first page, 1,000 sessions, ${label}: ${ms.toFixed(0)} ms, ${(body.length / 1024).toFixed(0)} KiB`,
  );
}
server.close();
rmSync(root, { recursive: true, force: true });
