import { fileURLToPath } from 'node:url';
import test from 'ava';
import { loadPlan } from '../../src/app/plan/load.ts';
import { capabilitiesMissingFor } from '../../src/app/verdict/env.ts';

const complete = fileURLToPath(new URL('../plan/fixtures/complete.md', import.meta.url));

test('§6b gaps per scenario: missing or unprobed requirements count, SUT-provided ones do not', async (t) => {
  const plan = await loadPlan(complete);
  t.deepEqual(capabilitiesMissingFor(plan, 'S1', [{ requirement: 'iptables', present: true }]), []);
  t.deepEqual(
    capabilitiesMissingFor(plan, 'S1', [
      { requirement: 'iptables', present: false, source: 'which: not found' },
    ]),
    [{ name: 'iptables', reason: 'which: not found' }],
  );
  t.deepEqual(capabilitiesMissingFor(plan, 'S2', []), [
    { name: 'iptables', reason: 'not probed; install: apt-get install -y iptables' },
  ]);
  // etcd is "brought up by SUT"; S3 (and its arms) need nothing else
  t.deepEqual(capabilitiesMissingFor(plan, 'S3/api', []), []);
});
