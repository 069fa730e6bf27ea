import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import {
  appendKnownHost,
  checkHostKey,
  fingerprintSha256,
  keyTypeOfBlob,
  knownHostsName,
  parseKnownHosts,
  patternsMatch,
  preferredHostKeyAlgorithms,
} from '../../src/core/control/known-hosts.ts';

const dir = mkdtempSync(join(tmpdir(), 'faultline-kh-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

function genKey(name: string): { line: string; blob: Buffer } {
  const path = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path]);
  const [type, b64] = readFileSync(`${path}.pub`, 'utf8').trim().split(' ');
  return { line: `${type} ${b64}`, blob: Buffer.from(b64 ?? '', 'base64') };
}

const k1 = genKey('k1');
const k2 = genKey('k2');

test('plain, bracketed-port, wildcard and negated patterns', (t) => {
  t.true(patternsMatch('n1,10.0.0.1', 'n1'));
  t.true(patternsMatch('[127.0.0.1]:2222', knownHostsName('127.0.0.1', 2222)));
  t.false(patternsMatch('127.0.0.1', knownHostsName('127.0.0.1', 2222)));
  t.true(patternsMatch('*.lab', 'db1.lab'));
  t.false(patternsMatch('*.lab,!db2.lab', 'db2.lab'));
  t.true(patternsMatch('db?.lab', 'db7.lab'));
});

test('hashed entries written by ssh-keygen -H are matched', (t) => {
  const file = join(dir, 'hashed');
  writeFileSync(file, `10.9.8.7 ${k1.line}\n[10.9.8.7]:2200 ${k2.line}\n`);
  execFileSync('ssh-keygen', ['-H', '-f', file], { stdio: 'ignore' });
  const text = readFileSync(file, 'utf8');
  t.false(text.includes('10.9.8.7'), 'ssh-keygen really hashed the names');
  const entries = parseKnownHosts(text, file);
  t.is(entries.length, 2);
  t.deepEqual(checkHostKey(entries, '10.9.8.7', k1.blob), { status: 'match' });
  t.deepEqual(checkHostKey(entries, knownHostsName('10.9.8.7', 2200), k2.blob), { status: 'match' });
  t.is(checkHostKey(entries, '10.9.8.7', k2.blob).status, 'changed');
  t.is(checkHostKey(entries, '10.9.8.8', k1.blob).status, 'unknown');
});

test('revoked keys are refused even when also listed', (t) => {
  const entries = parseKnownHosts(`n1 ${k1.line}\n@revoked * ${k1.line}\n`);
  t.is(checkHostKey(entries, 'n1', k1.blob).status, 'revoked');
});

test('comments, blank and malformed lines are skipped', (t) => {
  const entries = parseKnownHosts(
    `# c\n\nn1\nn2 ssh-ed25519\n@bogus n3 ${k1.line}\nn4 ${k1.line} comment here\n`,
  );
  t.is(entries.length, 1);
  t.is(entries[0]?.line, 6);
});

test('appendKnownHost writes an entry that verifies; key type and fingerprint are read from the blob', (t) => {
  const file = join(dir, 'sub', 'known_hosts');
  appendKnownHost(file, knownHostsName('10.1.1.1', 2222), k1.blob);
  const entries = parseKnownHosts(readFileSync(file, 'utf8'));
  t.is(checkHostKey(entries, '[10.1.1.1]:2222', k1.blob).status, 'match');
  t.is(keyTypeOfBlob(k1.blob), 'ssh-ed25519');
  const listed = execFileSync('ssh-keygen', ['-l', '-f', join(dir, 'k1.pub')], { encoding: 'utf8' });
  t.is(fingerprintSha256(k1.blob), listed.split(' ')[1] ?? '');
});

test('known key types are preferred in negotiation', (t) => {
  const entries = parseKnownHosts(`n1 ssh-rsa AAAAB3NzaC1yc2E=\nn1 ${k1.line}\n`);
  t.deepEqual(preferredHostKeyAlgorithms(entries, 'n1'), [
    'rsa-sha2-512',
    'rsa-sha2-256',
    'ssh-rsa',
    'ssh-ed25519',
  ]);
  t.deepEqual(preferredHostKeyAlgorithms(entries, 'n2'), []);
});
