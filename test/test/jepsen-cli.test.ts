import { mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { combinedExitCode } from '../../src/app/cli/commands/test-action.ts';
import { clusterAddress } from '../../src/core/control/addresses.ts';
import { nodesFromFlags } from '../../src/lib/clusters/node-list.ts';
import { withCluster } from '../helpers/cluster.ts';

/** Jepsen's CLI habits: --nodes / --nodes-file, --username, --ssh-private-key, --test-count. */
const dir = mkdtempSync(join(tmpdir(), 'faultline-jepsen-cli-'));
const key = join(dir, 'id');
writeFileSync(key, 'not a real key\n');

test('--nodes names each node by its host; host:port, --username and --ssh-private-key apply to all', (t) => {
  const specs = nodesFromFlags({ nodes: 'n1, n2:2222,10.0.0.3', username: 'admin', sshPrivateKey: key });
  t.deepEqual(specs, [
    { name: 'n1', host: 'n1', port: 22, user: 'admin', identityFile: key },
    { name: 'n2', host: 'n2', port: 2222, user: 'admin', identityFile: key },
    { name: '10.0.0.3', host: '10.0.0.3', port: 22, user: 'admin', identityFile: key },
  ]);
  t.is(nodesFromFlags({ nodes: 'a' })?.[0]?.user, 'root', "Jepsen's default user");
  t.is(nodesFromFlags({}), undefined);
});

test('--nodes-file: one host per line, comments and blank lines skipped, bad lines named by file:line', (t) => {
  const file = join(dir, 'nodes');
  writeFileSync(file, '# lab\nn1\n\nn2   # rack b\nn3:2200\n');
  t.deepEqual(
    nodesFromFlags({ nodesFile: file })?.map((s) => [s.name, s.port]),
    [
      ['n1', 22],
      ['n2', 22],
      ['n3', 2200],
    ],
  );
  const bad = join(dir, 'bad-nodes');
  writeFileSync(bad, 'n1\nn 2\n');
  t.throws(() => nodesFromFlags({ nodesFile: bad }), { message: new RegExp(`${bad}:2: "n 2"`) });
});

test('node-list flags refuse what Jepsen would not mean', (t) => {
  t.throws(() => nodesFromFlags({ username: 'admin' }), { message: /go with --nodes/ });
  t.throws(() => nodesFromFlags({ nodes: 'a', nodesFile: 'f' }), { message: /exclude each other/ });
  t.throws(() => nodesFromFlags({ nodes: 'a,a' }), { message: /listed twice/ });
  t.throws(() => nodesFromFlags({ nodes: ' , ' }), { message: /no nodes/ });
  t.throws(() => nodesFromFlags({ nodes: 'a:99999' }), { message: /not a host or host:port/ });
  t.throws(() => nodesFromFlags({ nodes: 'a', sshPrivateKey: join(dir, 'nope') }), {
    message: /no such file/,
  });
});

test('--test-count exit code: any invalid run is 1, else any unknown run 2, else 0', (t) => {
  t.is(combinedExitCode([true, true, true]), 0);
  t.is(combinedExitCode([true, 'unknown', true]), 2);
  t.is(combinedExitCode([true, 'unknown', false]), 1);
  t.is(combinedExitCode([false, true]), 1);
});

const fx = withCluster(test, { nodes: 3, name: 'lab-jepsen-cli' });

fx.test.serial(
  'faultline test --nodes … --username --ssh-private-key --test-count 2 runs seeds 7 and 8',
  async (t) => {
    const c = fx.cluster();
    const hosts = c.nodes.map((n) => clusterAddress(n)).join(',');
    const out = join(dir, 'runs');
    const r = await execa(
      'node',
      [
        'bin/faultline.js',
        'test',
        '--nodes',
        hosts,
        '--username',
        'root',
        '--ssh-private-key',
        c.identityFile,
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
        '--test-count',
        '2',
        '--seed',
        '7',
        '--out',
        out,
      ],
      { reject: false, env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' } },
    );
    t.is(r.exitCode, 0, r.stderr);
    // Each run is a session of its own in the store (<out>/<db>-<workload>/<timestamp>/), as Jepsen
    // gives each test its own directory: sessions, serve and latest see both.
    const store = join(out, 'etcd-register');
    const sessions = readdirSync(store)
      .filter((d) => /^\d{4}-/.test(d))
      .sort();
    t.is(sessions.length, 2, sessions.join(' '));
    const seeds = sessions.map(
      (d) => (JSON.parse(readFileSync(join(store, d, 'schedule.json'), 'utf8')) as { seed: number }).seed,
    );
    t.deepEqual(seeds, [7, 8]);
    t.is(realpathSync(join(store, 'latest')), realpathSync(join(store, sessions[1] as string)));
    const index = readFileSync(join(store, '.index.jsonl'), 'utf8').trim().split('\n');
    t.is(index.length, 2, 'both runs are in the store summary index');
    const listed = await execa('node', ['bin/faultline.js', 'sessions', 'list', '--root', out], {
      reject: false,
      env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' },
    });
    t.is(listed.exitCode, 0, listed.stderr);
    t.notRegex(listed.stdout + listed.stderr, /unreadable/i);
    t.regex(r.stderr, /2 of 2 runs \(seeds 7…8\): 7 valid, 8 valid/);
  },
);
