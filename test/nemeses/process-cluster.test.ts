import test from 'ava';
import { nodeStateDir } from '../../nemeses/node-state.ts';
import { processNemesis } from '../../nemeses/process.ts';
import { withCluster } from '../helpers/cluster.ts';

const fx = withCluster(test, { nodes: 3, name: 'nem-proc' });

const pidFile = (node: string) => `/tmp/nem-proc-${node}.pid`;
const startCommand = (node: string) => `sleep 600 & echo $! > ${pidFile(node)}; wait`;

async function startVictim(node: string): Promise<number> {
  const remote = await fx.remote();
  await remote.exec(node, `setsid sh -c '${startCommand(node)}' </dev/null >/dev/null 2>&1 &`);
  for (let i = 0; i < 100; i++) {
    const r = await remote.exec(node, `cat ${pidFile(node)} 2>/dev/null`, { check: false });
    const pid = Number.parseInt(r.stdout, 10);
    if (pid > 1) return pid;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error('victim did not start');
}

// Victims die with the cluster: the fixture's teardown kills every process in its namespaces.

fx.test.serial('pause: State T while paused, running again after heal, marker swept', async (t) => {
  const remote = await fx.remote();
  const pid = await startVictim('n1');
  const spec = {
    kind: 'process',
    action: 'pause',
    targets: ['n1'],
    params: { pidFiles: { n1: pidFile('n1') } },
  };
  const rec = await processNemesis.inject(remote, spec, 'p1');
  t.is((rec.undo.pids as Record<string, number>).n1, pid);
  const ev = await processNemesis.evidence(remote, rec);
  t.true(ev.landed, ev.reason);
  t.regex(String(ev.signals[0]?.during), /^T/);
  t.regex(String(ev.signals[0]?.before), /^S/);
  await processNemesis.heal(remote, rec);
  const after = await processNemesis.evidenceAfterHeal?.(remote, rec);
  t.true(after?.landed, after?.reason);
  t.regex(String(after?.signals[0]?.after), /^[SR]/);
  t.true((await processNemesis.verifyClean(remote, 'n1')).clean);
});

fx.test.serial('an abandoned pause is found and continued by verifyClean', async (t) => {
  const remote = await fx.remote();
  await startVictim('n2');
  const spec = { kind: 'process', action: 'pause', targets: ['n2'], params: { pidFile: pidFile('n2') } };
  const rec = await processNemesis.inject(remote, spec, 'p2');
  const sweep = await processNemesis.verifyClean(remote, 'n2');
  t.true(sweep.clean);
  t.true(
    sweep.fixed.some((f) => f.includes('continued')),
    sweep.fixed.join('; '),
  );
  const after = await processNemesis.evidenceAfterHeal?.(remote, rec);
  t.true(after?.landed);
});

fx.test.serial('kill -9: the pid is gone; heal starts it again with a new pid', async (t) => {
  const remote = await fx.remote();
  const pid = await startVictim('n3');
  const spec = {
    kind: 'process',
    action: 'kill',
    targets: ['n3'],
    params: { pidFile: pidFile('n3'), startCommand: startCommand('n3') },
  };
  const rec = await processNemesis.inject(remote, spec, 'k1');
  const ev = await processNemesis.evidence(remote, rec);
  t.true(ev.landed, ev.reason);
  t.is(ev.signals[0]?.during, 'gone');
  await processNemesis.heal(remote, rec);
  let fresh = pid;
  for (let i = 0; i < 100 && (fresh === pid || Number.isNaN(fresh)); i++) {
    await new Promise((r) => setTimeout(r, 20));
    fresh = Number.parseInt((await remote.exec('n3', `cat ${pidFile('n3')}`)).stdout, 10);
  }
  t.not(fresh, pid);
});

fx.test.serial('restart: old pid gone, a new pid running', async (t) => {
  const remote = await fx.remote();
  const pid = await startVictim('n1');
  const spec = {
    kind: 'process',
    action: 'restart',
    targets: ['n1'],
    params: { pidFile: pidFile('n1'), startCommand: startCommand('n1') },
  };
  const rec = await processNemesis.inject(remote, spec, 'r1');
  const ev = await processNemesis.evidence(remote, rec);
  t.true(ev.landed, ev.reason);
  const fresh = (rec.undo.newPids as Record<string, number>).n1;
  t.truthy(fresh);
  t.not(fresh, pid);
});

fx.test.serial('a missing pidfile is refused before anything is signalled', async (t) => {
  const remote = await fx.remote();
  const spec = {
    kind: 'process',
    action: 'kill',
    targets: ['n2'],
    params: { pidFile: '/tmp/nem-proc-none.pid' },
  };
  await t.throwsAsync(processNemesis.inject(remote, spec, 'k9'), { message: /n2: no pid/ });
});

/** A daemon that starts two children (as a PostgreSQL postmaster starts its backends); its pid. */
async function startParent(node: string): Promise<number> {
  const remote = await fx.remote();
  const file = pidFile(node);
  await remote.exec(
    node,
    `rm -f ${file}; setsid sh -c 'echo $$ > ${file}; sleep 600 & sleep 600 & wait' </dev/null >/dev/null 2>&1 &`,
  );
  for (let i = 0; i < 100; i++) {
    const r = await remote.exec(
      node,
      `cat ${file} 2>/dev/null; ps -o pid= --ppid $(cat ${file} 2>/dev/null || echo 0) | wc -l`,
      { check: false },
    );
    const [pid, kids] = r.stdout.trim().split('\n').map(Number);
    if ((pid as number) > 1 && kids === 2) return pid as number;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error('parent did not start its children');
}

fx.test.serial(
  'pause and kill act on the process and every process it started; heal resumes them all',
  async (t) => {
    const remote = await fx.remote();
    const pid = await startParent('n1');
    const pause = await processNemesis.inject(
      remote,
      { kind: 'process', action: 'pause', targets: ['n1'], params: { pidFile: pidFile('n1') } },
      'tree1',
    );
    const tree = (pause.undo.tree as Record<string, number[]>).n1 ?? [];
    t.is(tree.length, 3, `the parent and its two children: ${tree.join(' ')}`);
    t.is(tree[0], pid);
    const ev = await processNemesis.evidence(remote, pause);
    t.true(ev.landed, ev.reason);
    const children = ev.signals.find((s) => s.signal.startsWith('the 2 processes'));
    t.is(children?.during, '2 of 2', JSON.stringify(ev.signals));
    // The sweep would resume each stopped pid: each one is marked.
    const marked = await remote.exec('n1', `ls ${nodeStateDir(remote.node('n1'), 'paused')}`, { sudo: true });
    for (const p of tree) t.regex(marked.stdout, new RegExp(`\\b${p}\\b`));
    await processNemesis.heal(remote, pause);
    const after = await processNemesis.evidenceAfterHeal?.(remote, pause);
    t.true(after?.landed, after?.reason);
    t.is(after?.signals.find((s) => s.signal.startsWith('the 2 processes'))?.after, '2 of 2');
    t.true((await processNemesis.verifyClean(remote, 'n1')).clean);
    const kill = await processNemesis.inject(
      remote,
      { kind: 'process', action: 'kill', targets: ['n1'], params: { pidFile: pidFile('n1') } },
      'tree2',
    );
    const killed = await processNemesis.evidence(remote, kill);
    t.true(killed.landed, killed.reason);
    t.is(killed.signals.find((s) => s.signal.startsWith('the 2 processes'))?.during, '2 of 2');
    const left = await remote.exec(
      'n1',
      `for p in ${tree.join(' ')}; do [ -e /proc/$p ] && grep -h '^State' /proc/$p/status; done; true`,
    );
    t.notRegex(left.stdout, /State:\s*[RST]/, 'no process of the tree runs or waits after the kill');
  },
);
