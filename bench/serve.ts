import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INDEX_FILE } from '../src/app/store/index-file.ts';
import { storeNames } from '../src/app/store/store.ts';
import { generateStore } from '../test/helpers/store.ts';

/**
 * `npm run bench:serve`: time to the first page of `faultline serve` over a generated store of 1,000
 * sessions (10 plans × 100 nights, 3 rows each, report.json files as large as a real run's). Each
 * measurement starts a fresh `faultline serve` process (nothing cached in memory, as after a restart)
 * and times its first and second GET /; once with the store's summary index, as `faultline run`
 * leaves it, and once without (every shown session's report.json read and parsed), three times each.
 */
const ROUNDS = 3;
const repo = fileURLToPath(new URL('../', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'fl-bench-serve-'));

function generate(): void {
  generateStore(root, {
    names: Array.from({ length: 10 }, (_, i) => `plan-${i}`),
    perName: 100,
    rowOf: (_n, night, row) =>
      row === 'S3' && night % 7 === 0
        ? { verdict: 'FAIL-reproducible' }
        : { verdict: 'PASS-smoke', opsPerSec: 40 + (night % 9) },
  });
}

/** Starts `faultline serve` on a free port; resolves with the process and its URL. */
function serve(): Promise<{ url: string; stop: () => void }> {
  const p = spawn(
    process.execPath,
    [join(repo, 'bin/faultline.js'), 'serve', '--root', root, '--port', '0'],
    {
      env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  return new Promise((resolve, reject) => {
    let err = '';
    p.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = err.match(/http:\/\/127\.0\.0\.1:\d+\//);
      if (m) resolve({ url: m[0], stop: () => p.kill('SIGTERM') });
    });
    p.once('exit', (code) => reject(new Error(`faultline serve exited ${code}: ${err}`)));
  });
}

async function timed(url: string): Promise<{ ms: number; bytes: number }> {
  const t0 = performance.now();
  const r = await fetch(url);
  const body = await r.text();
  if (r.status !== 200) throw new Error(`GET ${url}: ${r.status}`);
  return { ms: performance.now() - t0, bytes: body.length };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(label: string): Promise<void> {
  const first: number[] = [];
  const second: number[] = [];
  let bytes = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const s = await serve();
    try {
      const a = await timed(s.url);
      const b = await timed(s.url);
      first.push(a.ms);
      second.push(b.ms);
      bytes = a.bytes;
    } finally {
      s.stop();
    }
  }
  const ms = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(' / ');
  console.log(
    `${label}: first page ${median(first).toFixed(0)} ms (runs: ${ms(first)}), next page ${median(second).toFixed(0)} ms (${ms(second)}), ${(bytes / 1024).toFixed(0)} KiB`,
  );
}

try {
  const t = performance.now();
  generate();
  const report = statSync(join(root, 'plan-0', 'latest', 'findings', 'report.json')).size;
  console.log(
    `store: 10 plans × 100 sessions, report.json ${(report / 1024).toFixed(0)} KiB each, generated in ${((performance.now() - t) / 1000).toFixed(1)} s; load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  await measure('1,000 sessions, with the summary index');
  for (const name of storeNames(root)) rmSync(join(root, name, INDEX_FILE));
  await measure('1,000 sessions, without an index (every report.json parsed)');
  console.log(
    `load average after: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
