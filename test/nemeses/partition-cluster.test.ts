import test from 'ava';
import { partitionNemesis } from '../../nemeses/partition.ts';
import { probeConnect } from '../../nemeses/probe.ts';
import { withCluster } from '../helpers/cluster.ts';

const fx = withCluster(test, { nodes: 5, name: 'nem-part' });

fx.test.serial(
  'halves: DROP counters > 0, connects across the cut time out, succeed after heal, node clean',
  async (t) => {
    const remote = await fx.remote();
    const spec = { kind: 'partition', action: 'start', params: { topology: 'halves' } };
    const record = await partitionNemesis.inject(remote, spec, 'w1');
    t.deepEqual(Object.keys(record.undo.grudge as object).sort(), ['n1', 'n2', 'n3', 'n4', 'n5']);
    const ev = await partitionNemesis.evidence(remote, record);
    t.true(ev.landed, ev.reason);
    const injector = ev.signals.filter((s) => s.side === 'injector');
    t.true(injector.some((s) => (s.during as number) > 0));
    const victim = ev.signals.filter((s) => s.side === 'victim');
    t.true(victim.length > 0);
    for (const v of victim) {
      t.is(v.during, 'timeout');
      t.true(v.before === 'connected' || v.before === 'refused');
    }
    // Same side still talks: n1 and n2... halves are [n1,n2] vs [n3,n4,n5].
    const same = await probeConnect(remote, 'n3', 'n4', remote.node('n4').host, remote.node('n4').port, 2000);
    t.is(same.outcome, 'connected');
    await partitionNemesis.heal(remote, record);
    const after = await partitionNemesis.evidenceAfterHeal?.(remote, record);
    t.true(after?.landed, after?.reason);
    for (const n of remote.nodes) {
      const c = await partitionNemesis.verifyClean(remote, n.name);
      t.true(c.clean);
      t.deepEqual(c.found, [], `${n.name} had leftovers`);
    }
  },
);
