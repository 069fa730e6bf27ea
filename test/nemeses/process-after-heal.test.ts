import test from 'ava';
import { processNemesis } from '../../nemeses/process.ts';
import type { FaultRecord } from '../../nemeses/types.ts';
import type { Remote } from '../../src/core/control/types.ts';
import type { FaultTarget, PeerView } from '../../src/core/database/capabilities.ts';

// After a kill window is healed, the killed member's peer is asked whether it serves again. While another
// fault is still in force (a partition that cuts the peer off), the peer cannot see it back: that view is
// read once and marked not judged, instead of being waited for (which held up the other fault's heal).

const remote = {
  nodes: ['n1', 'n2'].map((name) => ({ name, host: name, port: 22, user: 'root' })),
  node: (name: string) => ({ name, host: name, port: 22, user: 'root' }),
  async exec(_node: string, command: string) {
    // The pidfile names a new pid, running.
    if (command.startsWith('cat ')) return { stdout: '4712\n', stderr: '', code: 0 };
    return { stdout: 'S (sleeping)\n', stderr: '', code: 0 };
  },
} as unknown as Remote;

function record(): FaultRecord {
  return {
    id: 'w2',
    spec: { kind: 'process', action: 'kill', targets: ['n2'] },
    nodes: ['n2'],
    injectedAt: new Date().toISOString(),
    undo: {
      action: 'kill',
      pids: { n2: 4711 },
      pidFiles: { n2: '/run/n2.pid' },
      before: { n2: 'S (sleeping)' },
      delivered: { n2: 'SIGKILL' },
      peers: { n2: { observer: 'n1', before: 'up: ok' } },
    },
  };
}

function sut(asked: string[]): FaultTarget {
  const db = {
    name: 'db',
    peerView: async (_ctx: unknown, observer: string, node: string): Promise<PeerView> => {
      asked.push(`${observer}->${node}`);
      return { up: false, detail: 'no answer' };
    },
  };
  return { db, ctx: { remote, nodes: remote.nodes.map((n) => n.name) } };
}

test('with another fault in force, the peer view after heal is read once and not judged', async (t) => {
  const asked: string[] = [];
  const started = performance.now();
  const after = await processNemesis.evidenceAfterHeal?.(remote, record(), {
    sut: sut(asked),
    othersInForce: ['w1 partition'],
  });
  t.true(performance.now() - started < 5000, 'not waited for');
  t.deepEqual(asked, ['n1->n2']);
  const peer = after?.signals.find((s) => /as peer n1 sees it$/.test(s.signal));
  t.is(peer?.after, 'down: no answer');
  t.is(peer?.note, 'not judged: w1 partition still in force');
  t.true(after?.landed, after?.reason);
});

test('with no other fault in force, a peer that never sees the member back fails the after-heal check', async (t) => {
  const asked: string[] = [];
  const after = await processNemesis.evidenceAfterHeal?.(remote, record(), { sut: sut(asked) });
  t.true(asked.length > 1, 'asked until the bound');
  t.false(after?.landed);
  t.regex(String(after?.reason), /not back after heal: n2 db member n2 as peer n1 sees it/);
});
