import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { openSshClient } from '../../src/core/control/ssh-config.ts';
import { proxyCommandLine } from '../../src/core/control/ssh-connection.ts';

/**
 * Fields that name a command for the control host (inventory/ledger `proxyCommand`, ssh_config
 * `ProxyCommand` and `Match exec`) run only with --allow-proxy-command on the command line. Each case
 * plants a command that writes a canary file; without the flag the command is refused (exit 254, the
 * file and field named) and the canary never appears.
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const run = (args: string[]) =>
  execa('node', [bin, ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' }, timeout: 120_000 });

function sandbox() {
  const dir = mkdtempSync(join(tmpdir(), 'fl-sec-cmd-'));
  const canary = join(dir, 'CANARY');
  const file = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  return { dir, canary, file };
}

test('an inventory proxyCommand is refused without --allow-proxy-command, and runs with it', async (t) => {
  const s = sandbox();
  const inv = s.file(
    'inv.yaml',
    `nodes:\n  n1:\n    host: 127.0.0.1\n    port: 1\n    proxyCommand: touch ${s.canary}; exit 1\n`,
  );
  const refused = await run(['doctor', '--inventory', inv]);
  t.is(refused.exitCode, 254, refused.stderr);
  t.regex(refused.stderr, /inv\.yaml:5: nodes\.n1\.proxyCommand: names a command .*--allow-proxy-command/);
  t.false(existsSync(s.canary));
  const allowed = await run(['doctor', '--inventory', inv, '--allow-proxy-command']);
  t.not(allowed.exitCode, 255, allowed.stderr);
  t.true(existsSync(s.canary), allowed.stdout + allowed.stderr);
});

test('ssh_config ProxyCommand and Match exec (also through Include) are refused before ssh reads the file', async (t) => {
  const s = sandbox();
  const proxy = s.file('proxy.conf', `Host n1\n  HostName 127.0.0.1\n  ProxyCommand touch ${s.canary}\n`);
  const inc = s.file('included.conf', `Match exec "touch ${s.canary}"\n  User nobody\n`);
  const match = s.file('match.conf', `Include ${inc}\nHost n1\n  HostName 127.0.0.1\n`);
  for (const conf of [proxy, match]) {
    const inv = s.file('inv.yaml', `sshConfig: ${conf}\nnodes:\n  n1: n1\n`);
    const r = await run(['doctor', '--inventory', inv]);
    t.is(r.exitCode, 254, r.stderr);
    t.regex(r.stderr, /(ProxyCommand|Match exec): names a command .*--allow-proxy-command/);
    t.false(existsSync(s.canary), conf);
  }
  if (openSshClient() === null) return;
  // Proof the Match exec case is real: with the flag, ssh -G runs it.
  const inv = s.file('inv.yaml', `sshConfig: ${match}\nnodes:\n  n1: n1\n`);
  await run(['doctor', '--inventory', inv, '--allow-proxy-command']);
  t.true(existsSync(s.canary));
});

test('a ledger proxyCommand or unknown field is refused by heal; a hostile host never reaches a shell', async (t) => {
  const s = sandbox();
  const node = { name: 'n1', host: '127.0.0.1', port: 1, user: 'root' };
  const entry = (n: object) => `${JSON.stringify({ t: 'cluster', at: 'x', pid: 1, nodes: [n] })}\n`;
  const withCommand = s.file('l1.jsonl', entry({ ...node, proxyCommand: `touch ${s.canary}` }));
  const r1 = await run(['heal', '--ledger', withCommand]);
  t.is(r1.exitCode, 254, r1.stderr);
  t.regex(r1.stderr, /l1\.jsonl:1: nodes\.n1\.proxyCommand: names a command/);
  const unknown = s.file('l2.jsonl', entry({ ...node, localCommand: `touch ${s.canary}` }));
  const r2 = await run(['heal', '--ledger', unknown]);
  t.is(r2.exitCode, 254, r2.stderr);
  t.regex(r2.stderr, /l2\.jsonl:1: .*localCommand|l2\.jsonl:1: nodes/);
  t.false(existsSync(s.canary));
  // An inventory host with shell syntax is not a host.
  const inv = s.file('inv.yaml', `nodes:\n  n1: x$(touch ${s.canary})\n`);
  const r3 = await run(['doctor', '--inventory', inv]);
  t.is(r3.exitCode, 254, r3.stderr);
  t.regex(r3.stderr, /inv\.yaml:2: nodes\.n1(\.host)?: must be a host name/);
  // And where a host does reach a ProxyCommand (opted in), %h, %p, %r are quoted.
  const line = proxyCommandLine('nc %h %p # %r', { host: `x$(touch ${s.canary})`, port: 22, user: "a'b" });
  await execa('sh', ['-c', `echo ${line}`]);
  t.false(existsSync(s.canary));
  t.is(line, `nc 'x$(touch ${s.canary})' 22 # 'a'\\''b'`);
});
