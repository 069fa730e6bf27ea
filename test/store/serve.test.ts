import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import { startServer } from '../../src/app/store/results-server.ts';
import { generateStore } from '../helpers/store.ts';

test('serve: index grid, session page, diff view, files; read-only, nothing outside the root', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'fl-serve-'));
  generateStore(root, {
    names: ['nightly'],
    perName: 4,
    rowOf: (_n, night, row) =>
      row === 'S1' && night === 3
        ? { verdict: 'FAIL-reproducible' }
        : { verdict: 'PASS-smoke', opsPerSec: 40 + night },
  });
  symlinkSync('/etc', join(root, 'nightly', '2026-10-01T02-00-00Z', 'escape'));
  const server = await startServer(root, { port: 0, host: '127.0.0.1', last: 30 });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const get = async (p: string, init?: RequestInit) => {
    const r = await fetch(base + p, init);
    return { status: r.status, text: await r.text() };
  };
  try {
    const index = await get('/');
    t.is(index.status, 200);
    t.regex(index.text, /<h2 id="nightly">nightly<\/h2>/);
    t.is(index.text.match(/class="cell"/g)?.length, 12, '3 rows × 4 sessions');
    t.regex(
      index.text,
      /title="2026-10-04T02-00-00Z: FAIL-reproducible" class="cell" style="background:#d9534f"/,
    );
    t.regex(index.text, /<svg width="124"/);
    t.regex(index.text, /<th>anomalies trend<\/th>/);
    t.regex(index.text, /<title>0–1, last 1<\/title>/, 'S1 anomalies: none, then one on the FAIL night');
    const session = await get('/session/nightly/2026-10-04T02-00-00Z');
    t.regex(session.text, /session verdict: <b>FAIL<\/b>/);
    t.regex(session.text, /href="\/files\/nightly\/2026-10-04T02-00-00Z\/findings\/report.json"/);
    const diff = await get('/diff/nightly/2026-10-03T02-00-00Z/2026-10-04T02-00-00Z');
    t.regex(diff.text, /New failures:\*\* \n\n- S1: PASS-smoke → FAIL-reproducible/);
    const file = await get('/files/nightly/2026-10-04T02-00-00Z/findings/report.json');
    t.is(JSON.parse(file.text).sessionVerdict, 'FAIL');
    // A file `sessions compress` gzipped is still served under its plain name.
    const plain = join(root, 'nightly', '2026-10-04T02-00-00Z', 'findings', 'S1.md');
    writeFileSync(`${plain}.gz`, gzipSync(readFileSync(plain)));
    rmSync(plain);
    const gz = await fetch(`${base}/files/nightly/2026-10-04T02-00-00Z/findings/S1.md`);
    t.is(gz.status, 200);
    t.is(gz.headers.get('content-encoding'), 'gzip');
    t.is(await gz.text(), '# S1\n\nFAIL-reproducible\n');
    t.is((await get('/files/nightly/2026-10-04T02-00-00Z/../../../etc/passwd')).status, 404);
    t.true([403, 404].includes((await get('/files/nightly/2026-10-04T02-00-00Z/%2e%2e/%2e%2e/x')).status));
    t.is(
      (await get('/files/nightly/2026-10-01T02-00-00Z/escape/passwd')).status,
      403,
      'a symlink out of the root',
    );
    t.is((await get('/session/nightly/../../etc')).status, 404);
    t.is((await get('/', { method: 'POST' })).status, 405);
    t.is(
      (await get('/files/nightly/2026-10-04T02-00-00Z/findings/report.json', { method: 'DELETE' })).status,
      405,
    );
  } finally {
    server.close();
  }
});
