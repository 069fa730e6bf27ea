import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { doctorExitCode } from '../../src/core/control/node-doctor.ts';

/** Edges of the security issue re-checked on the whole CLI: each is one line and exit 254. */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'fl-sec-edges-'));
const run = (...args: string[]) =>
  execa('node', [bin, ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' }, timeout: 180_000 });

test('an unknown Elle anomaly name (--anomalies G9) is bad input, a known one is accepted', async (t) => {
  const h = join(dir, 'h.jsonl');
  writeFileSync(
    h,
    '{"index":0,"type":"invoke","f":"txn","value":[["append","x",1]],"process":0,"time":0,"node":null,"faultEpoch":null}\n{"index":1,"type":"ok","f":"txn","value":[["append","x",1]],"process":0,"time":1,"node":null,"faultEpoch":null}\n',
  );
  const bad = await run('check', h, '--checker', 'elle', '--workload', 'list-append', '--anomalies', 'G9');
  t.is(bad.exitCode, 254, bad.stderr);
  t.regex(bad.stderr, /^faultline: elle: anomalies\.0: unknown anomaly type "G9"\n?$/);
  const ok = await run(
    'check',
    h,
    '--checker',
    'elle',
    '--workload',
    'list-append',
    '--anomalies',
    'G2-item,G1a',
  );
  t.not(ok.exitCode, 254, ok.stderr);
});

test('doctor exits 254 for a node it cannot reach (missing identity file), naming the node', async (t) => {
  const inv = join(dir, 'inv.yaml');
  writeFileSync(
    inv,
    'nodes:\n  n1: { host: 127.0.0.1, port: 1, user: root, identityFile: /nonexistent/key }\n',
  );
  const r = await run('doctor', '--inventory', inv);
  t.is(r.exitCode, 254, r.stderr);
  t.regex(r.stdout, /n1: ssh: missing \(.*identity file \/nonexistent\/key/);
});

test('doctor exit codes: 0 every required check passed, 1 a reachable node fails sudo, 254 unreachable', (t) => {
  const node = (item: string, status: 'ok' | 'missing') => ({
    node: 'n1',
    host: 'h',
    checks: [{ item, status, value: '', required: true }],
  });
  t.is(doctorExitCode({ ok: true, nodes: [node('ssh', 'ok')] } as never), 0);
  t.is(doctorExitCode({ ok: false, nodes: [node('sudo', 'missing')] } as never), 1);
  t.is(doctorExitCode({ ok: false, nodes: [node('ssh', 'missing')] } as never), 254);
});
