import test from 'ava';
import { nodeStateDir } from '../../nemeses/node-state.ts';

test('node state is keyed by cluster and node, so two local clusters on one host never share markers', (t) => {
  const a = nodeStateDir({ name: 'n1', labels: { cluster: 'alpha' } }, 'paused');
  const b = nodeStateDir({ name: 'n1', labels: { cluster: 'beta' } }, 'paused');
  t.is(a, '/run/faultline/alpha/n1/paused');
  t.not(a, b);
  t.is(nodeStateDir({ name: 'n1' }, 'junk'), '/run/faultline/default/n1/junk');
});

test('names that could leave the state directory are refused', (t) => {
  t.throws(() => nodeStateDir({ name: '../n1' }, 'x'), { message: /node name/ });
  t.throws(() => nodeStateDir({ name: 'n1', labels: { cluster: '../../etc' } }, 'x'), {
    message: /cluster label/,
  });
  t.throws(() => nodeStateDir({ name: '..', labels: { cluster: 'a' } }, 'x'), { message: /node name/ });
});
