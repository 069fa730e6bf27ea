import test from 'ava';
import { withCluster } from '../helpers/cluster.ts';

const fx = withCluster(test, { nodes: 3, name: 'ctl-basic' });

fx.test('every node answers in parallel with its own hostname', async (t) => {
  const r = await fx.remote();
  const results = await r.onNodes(['n1', 'n2', 'n3'], (n) => r.exec(n, 'hostname'));
  t.true(results.every((x) => x.ok));
  t.deepEqual(
    results.map((x) => x.value?.stdout.trim()),
    ['n1', 'n2', 'n3'],
  );
});
