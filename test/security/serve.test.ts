import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { startServer } from '../../src/app/store/results-server.ts';
import { generateStore } from '../helpers/store.ts';

/**
 * `serve` stays up whatever the store holds or the client sends: a FIFO or a device is refused, a file
 * that vanished is a 404, a foreign Host header (DNS rebinding) is refused, and the next request is
 * answered as before. `sessions list` on a report.json that is /dev/zero ends with an error, not 16 GB.
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;

function get(
  port: number,
  path: string,
  host = `127.0.0.1:${port}`,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host }, timeout: 20_000 }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

test('serve: special files, vanished files and foreign Host headers end one request, not the server', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'fl-sec-serve-'));
  generateStore(root, { names: ['nightly'], perName: 2, rowOf: () => ({ verdict: 'PASS-smoke' }) });
  const id = readdirSync(join(root, 'nightly')).find((d) => /^\d/.test(d))!;
  const dir = join(root, 'nightly', id);
  execFileSync('mkfifo', [join(dir, 'pipe.txt')]);
  symlinkSync('/dev/zero', join(dir, 'zero.txt'));
  writeFileSync(join(dir, 'gone.txt'), 'soon gone');
  const server = await startServer(root, { port: 0, host: '127.0.0.1', last: 30 });
  const port = (server.address() as AddressInfo).port;
  try {
    t.is((await get(port, '/')).status, 200);
    t.is((await get(port, '/', `evil.example:${port}`)).status, 421);
    t.is((await get(port, '/', 'evil.example')).status, 421);
    t.is((await get(port, '/', `localhost:${port}`)).status, 200);
    const fifo = await get(port, `/files/nightly/${id}/pipe.txt`);
    t.true([403, 404].includes(fifo.status), String(fifo.status));
    const zero = await get(port, `/files/nightly/${id}/zero.txt`);
    t.true([403, 404].includes(zero.status), String(zero.status));
    rmSync(join(dir, 'gone.txt'));
    t.is((await get(port, `/files/nightly/${id}/gone.txt`)).status, 404);
    t.is((await get(port, `/session/nightly/${id}`)).status, 200, 'still up');
  } finally {
    server.close();
  }
});

test('sessions list: a report.json that is a device or a FIFO is an error for that session, never a hang', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'fl-sec-serve-'));
  generateStore(root, { names: ['nightly'], perName: 2, rowOf: () => ({ verdict: 'PASS-smoke' }) });
  const ids = readdirSync(join(root, 'nightly')).filter((d) => /^\d/.test(d));
  for (const [i, id] of ids.entries()) {
    const report = join(root, 'nightly', id, 'findings', 'report.json');
    rmSync(report, { force: true });
    if (i === 0) symlinkSync('/dev/zero', report);
    else execFileSync('mkfifo', [report]);
  }
  rmSync(join(root, 'nightly', '.index.jsonl'), { force: true });
  const r = await execa('node', [bin, 'sessions', 'list', '--root', root], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
    timeout: 60_000,
  });
  t.false(r.timedOut ?? false);
  t.is(r.exitCode, 0, r.stderr);
  t.is(r.stdout.match(/ unreadable /g)?.length, 2, r.stdout);
});
