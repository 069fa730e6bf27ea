import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { clusterAddress } from '../../src/core/control/addresses.ts';
import { CLI_PASSWORD_ENV, hideCliPassword } from '../../src/core/control/cli-password.ts';
import { withCliPasswords } from '../../src/core/control/connect.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * Jepsen's `--password` (and `--password-env`, `--sudo-password-env`) on a node whose user has a password
 * and no key the control node holds: the password logs in, sudo takes its own, and the password string
 * is in no file of the session and in no output.
 */
const SUDO_ENV = 'FAULTLINE_TEST_PW_SUDO';
const PASSWORD = 'Tr0ub4dor &3 $pw';
process.env[SUDO_ENV] = PASSWORD;
const dir = mkdtempSync(join(tmpdir(), 'faultline-cli-password-'));

test('--password VALUE leaves the argv: rewritten to --password-env, the value only in the environment', (t) => {
  const before = process.env[CLI_PASSWORD_ENV];
  try {
    t.deepEqual(hideCliPassword(['node', 'f', 'doctor', '--password', 's3cret', '--json']), [
      'node',
      'f',
      'doctor',
      '--password-env',
      CLI_PASSWORD_ENV,
      '--json',
    ]);
    t.is(process.env[CLI_PASSWORD_ENV], 's3cret');
    t.deepEqual(hideCliPassword(['test', '--password=a=b']), ['test', '--password-env', CLI_PASSWORD_ENV]);
    t.is(process.env[CLI_PASSWORD_ENV], 'a=b');
    // After `--`: not ours.
    t.deepEqual(hideCliPassword(['x', '--', '--password', 'p']), ['x', '--', '--password', 'p']);
    t.throws(() => hideCliPassword(['test', '--password']), { message: /--password needs a value/ });
    t.throws(() => hideCliPassword(['test', '--password', 'a', '--password-env', 'X']), {
      message: /exclude each other/,
    });
  } finally {
    if (before === undefined) delete process.env[CLI_PASSWORD_ENV];
    else process.env[CLI_PASSWORD_ENV] = before;
  }
});

test('--password-env / --sudo-password-env override every node, and name unset or bad variables', (t) => {
  const specs = [
    { name: 'a', host: 'a', port: 22, user: 'u', passwordEnv: 'OLD' },
    { name: 'b', host: 'b', port: 22, user: 'u' },
  ];
  const out = withCliPasswords(specs, { passwordEnv: SUDO_ENV, sudoPasswordEnv: SUDO_ENV });
  for (const s of out) t.like(s, { passwordEnv: SUDO_ENV, sudoPasswordEnv: SUDO_ENV });
  t.is(specs[0]?.passwordEnv, 'OLD', 'the inventory specs are not changed in place');
  t.deepEqual(withCliPasswords(specs, {}), specs);
  t.throws(() => withCliPasswords(specs, { passwordEnv: 'FAULTLINE_TEST_PW_UNSET' }), {
    message: '--password-env FAULTLINE_TEST_PW_UNSET: that environment variable is not set',
  });
  t.throws(() => withCliPasswords(specs, { sudoPasswordEnv: 'no-such name' }), {
    message: /--sudo-password-env no-such name: expected an environment variable name/,
  });
});

const fx = withCluster(test, {
  nodes: 1,
  name: 'cli-password',
  loginUser: { name: 'fltpass', sudoPasswordEnv: SUDO_ENV },
});

/** Every file under `root` (recursively) that holds `needle`. */
function filesHolding(root: string, needle: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => readFileSync(f).includes(needle));
}

// No agent, and a HOME whose ~/.ssh holds no key: the password is the only way in.
const cliEnv = () => {
  const home = mkdtempSync(join(dir, 'home-'));
  const env: Record<string, string | undefined> = { ...process.env, FAULTLINE_FROM_SOURCE: '1', HOME: home };
  delete env.SSH_AUTH_SOCK;
  return env;
};

fx.test.serial(
  'doctor: refused without a password, in with --password; sudo with --sudo-password-env',
  async (t) => {
    const c = fx.cluster();
    const node = c.nodes[0];
    if (!node) throw new Error('no node');
    const inv = join(dir, 'inventory.yaml');
    writeFileSync(
      inv,
      `knownHosts: ${c.knownHostsPath}\nnodes:\n  n1:\n    host: ${node.host}\n    user: fltpass\n`,
    );
    const env = cliEnv();
    const bare = await execa('node', ['bin/faultline.js', 'doctor', '--inventory', inv, '--json'], {
      reject: false,
      env,
    });
    t.is(bare.exitCode, 254, 'no key and no password: the node is unreachable');
    t.regex(bare.stdout + bare.stderr, /auth/i);

    const logDir = join(dir, 'doctor-logs');
    const r = await execa(
      'node',
      [
        'bin/faultline.js',
        'doctor',
        '--inventory',
        inv,
        '--password',
        PASSWORD,
        '--sudo-password-env',
        SUDO_ENV,
        '--json',
        '--log-dir',
        logDir,
      ],
      { reject: false, env },
    );
    t.not(r.exitCode, 254, r.stderr);
    const report = JSON.parse(r.stdout) as {
      nodes: { node: string; checks: { item: string; status: string }[] }[];
    };
    const checks = Object.fromEntries((report.nodes[0]?.checks ?? []).map((c) => [c.item, c.status]));
    t.is(checks.ssh, 'ok', JSON.stringify(checks));
    t.is(checks.sudo, 'ok', JSON.stringify(checks));
    t.false((r.stdout + r.stderr).includes(PASSWORD), 'the password is never echoed');
    t.deepEqual(filesHolding(logDir, PASSWORD), []);
  },
);

fx.test.serial(
  'faultline test --nodes … --username --password: the session never holds the password',
  async (t) => {
    const c = fx.cluster();
    const node = c.nodes[0];
    if (!node) throw new Error('no node');
    const out = join(dir, 'sessions');
    const started = Date.now();
    const r = await execa(
      'node',
      [
        'bin/faultline.js',
        'test',
        '--nodes',
        clusterAddress(node),
        '--username',
        'fltpass',
        '--password',
        PASSWORD,
        '--sudo-password-env',
        SUDO_ENV,
        '--known-hosts',
        c.knownHostsPath,
        '--db',
        'etcd',
        '-w',
        'register',
        '--time-limit',
        '3s',
        '--recovery',
        '1s',
        '--rate',
        '20',
        '--out',
        out,
      ],
      { reject: false, env: cliEnv() },
    );
    t.log(
      `faultline test with --password: ${((Date.now() - started) / 1000).toFixed(1)} s, exit ${r.exitCode}`,
    );
    t.is(r.exitCode, 0, r.stderr);
    t.false((r.stdout + r.stderr).includes(PASSWORD), 'the password is never echoed');
    const test = readdirSync(out, { recursive: true }).find((f) => String(f).endsWith('test.json'));
    t.truthy(test, 'the session was written');
    const meta = readFileSync(join(out, String(test)), 'utf8');
    t.true(meta.includes(CLI_PASSWORD_ENV), 'the argv recorded names the variable the password went to');
    t.deepEqual(filesHolding(out, PASSWORD), [], 'no file of the session holds the password');
  },
);
