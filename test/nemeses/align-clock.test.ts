import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { alignClock } from '../../nemeses/clock.ts';
import type { ExecResult, NodeSpec, Remote } from '../../src/core/control/types.ts';

/**
 * A node whose clock is `offsetMs` ahead of this process's and whose round trips take `rttMs()`: reading
 * the clock happens at the start of the trip (the worst asymmetry), and `date -s '±S seconds'` shifts
 * it. No real node: alignClock's decisions are what is under test.
 */
function slowNode(initialOffsetMs: number, rttMs: (call: number) => number) {
  let offsetMs = initialOffsetMs;
  let calls = 0;
  const node: NodeSpec = { name: 'n1', host: '127.0.0.1' } as NodeSpec;
  const remote = {
    nodes: [node],
    node: () => node,
    async exec(_node: string, command: string): Promise<ExecResult> {
      const rtt = rttMs(calls++);
      const shift = /date -s '([+-]\d+\.\d+) seconds'/.exec(command);
      if (shift) offsetMs += Math.round(Number(shift[1]) * 1000);
      const read = (Date.now() + offsetMs) / 1000;
      await sleep(rtt);
      return { node: 'n1', command, stdout: `${read.toFixed(9)}\n`, stderr: '', code: 0, durationMs: rtt };
    },
  } as unknown as Remote;
  return { remote, offset: () => offsetMs };
}

test('a clock off by less than a slow round trip is still aligned once shorter trips come', async (t) => {
  // The first measurement's trips take 500 ms (error ±250 ms), hiding a 150 ms offset; later ones 4 ms.
  const node = slowNode(150, (call) => (call < 3 ? 500 : 4));
  const measured = await alignClock(node.remote, 'n1');
  t.true(Math.abs(node.offset()) <= 50, `node clock left ${node.offset()} ms off`);
  t.true(Math.abs(measured) <= 50, `alignClock reported ${measured} ms`);
});

test('a clock already within tolerance is not touched', async (t) => {
  const node = slowNode(10, () => 2);
  await alignClock(node.remote, 'n1');
  t.is(node.offset(), 10);
});

test('when no shorter round trip comes, alignment stops instead of chasing noise', async (t) => {
  const node = slowNode(150, () => 500);
  await alignClock(node.remote, 'n1');
  t.is(node.offset(), 150, 'an offset inside the measurement error is left alone');
});
