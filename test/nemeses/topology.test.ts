import test from 'ava';
import fc from 'fast-check';
import { selectTargets } from '../../nemeses/targets.ts';
import { canReach, computeGrudge, type Grudge, majoritiesRing } from '../../nemeses/topology.ts';
import { Rng } from '../../src/core/generator/rng.ts';

const nodes = (n: number) => Array.from({ length: n }, (_, i) => `n${i + 1}`);
const rng = () => new Rng(42);

/** Connected components of the symmetric "can talk both ways" relation. */
function components(g: Grudge, all: string[]): string[][] {
  const seen = new Set<string>();
  const out: string[][] = [];
  for (const s of all) {
    if (seen.has(s)) continue;
    const comp = [s];
    seen.add(s);
    for (let i = 0; i < comp.length; i++)
      for (const o of all)
        if (!seen.has(o) && canReach(g, comp[i] as string, o) && canReach(g, o, comp[i] as string)) {
          seen.add(o);
          comp.push(o);
        }
    out.push(comp.sort());
  }
  return out;
}

test('halves: the first ⌊n/2⌋ against the rest, symmetric', (t) => {
  const g = computeGrudge('halves', nodes(5), { rng: rng() });
  t.deepEqual(g.n1, ['n3', 'n4', 'n5']);
  t.deepEqual(g.n4, ['n1', 'n2']);
  t.deepEqual(components(g, nodes(5)), [
    ['n1', 'n2'],
    ['n3', 'n4', 'n5'],
  ]);
});

test('one isolates exactly one node; majority splits into a majority and a minority', (t) => {
  const one = computeGrudge('one', nodes(5), { rng: rng(), node: 'n3' });
  t.deepEqual(one.n3, ['n1', 'n2', 'n4', 'n5']);
  t.deepEqual(one.n1, ['n3']);
  const maj = components(computeGrudge('majority', nodes(5), { rng: rng() }), nodes(5));
  t.deepEqual(maj.map((c) => c.length).sort(), [2, 3]);
});

test('majorities-ring: every node sees a majority, no two see the same one (4..9 nodes)', (t) => {
  for (let n = 4; n <= 9; n++) {
    const all = nodes(n);
    const g = majoritiesRing(all);
    const views = all.map((a) =>
      all
        .filter((b) => canReach(g, b, a))
        .sort()
        .join(','),
    );
    for (const v of views) t.true(v.split(',').length > n / 2, `n=${n} view ${v}`);
    t.is(new Set(views).size, n, `n=${n}: views must differ`);
    for (const a of all) for (const b of all) t.is(canReach(g, a, b), canReach(g, b, a), 'symmetric');
  }
  t.throws(() => majoritiesRing(nodes(3)), { message: /at least 4 nodes/ });
});

test('bridge: one node talks to both halves, the halves do not talk to each other', (t) => {
  const all = nodes(5);
  const g = computeGrudge('bridge', all, { rng: rng() });
  const bridge = all.filter((a) => all.every((b) => canReach(g, a, b) && canReach(g, b, a)));
  t.is(bridge.length, 1);
  const rest = all.filter((a) => a !== bridge[0]);
  t.true(rest.some((a) => rest.some((b) => !canReach(g, a, b))));
});

test('minority-third, primaries, asymmetric and explicit grudges', (t) => {
  const mt = components(computeGrudge('minority-third', nodes(7), { rng: rng() }), nodes(7));
  t.deepEqual(mt.map((c) => c.length).sort(), [2, 5]);
  t.throws(() => computeGrudge('minority-third', nodes(3), { rng: rng() }), { message: /no minority third/ });
  const pr = components(
    computeGrudge('primaries', nodes(5), { rng: rng(), primaries: ['n2', 'n4'] }),
    nodes(5),
  );
  t.deepEqual(pr, [['n1', 'n3', 'n5'], ['n2'], ['n4']]);
  t.throws(() => computeGrudge('primaries', nodes(5), { rng: rng() }), { message: /current primaries/ });
  const asym = computeGrudge('asymmetric', nodes(4), { rng: rng(), from: ['n1'], to: ['n2', 'n3'] });
  t.false(canReach(asym, 'n1', 'n2'));
  t.true(canReach(asym, 'n2', 'n1'));
  t.deepEqual(computeGrudge('grudge', nodes(3), { rng: rng(), grudge: { n1: ['n2'] } }), { n1: ['n2'] });
  t.throws(() => computeGrudge('grudge', nodes(3), { rng: rng(), grudge: { n1: ['n9'] } }), {
    message: /unknown node n9/,
  });
  t.throws(() => computeGrudge('sideways', nodes(3), { rng: rng() }), {
    message: /unknown partition topology/,
  });
});

test('random topologies replay exactly from the seed', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 4, max: 9 }), (seed, n) => {
      for (const topo of ['random-halves', 'majority', 'majorities-ring', 'bridge', 'one'])
        t.deepEqual(
          computeGrudge(topo, nodes(n), { rng: new Rng(seed) }),
          computeGrudge(topo, nodes(n), { rng: new Rng(seed) }),
        );
    }),
    { numRuns: 50 },
  );
});

test('target selection: sizes per selector, explicit lists checked, primaries required', (t) => {
  const all = nodes(5);
  t.is(selectTargets('one', all, rng()).length, 1);
  t.is(selectTargets('minority', all, rng()).length, 2);
  t.is(selectTargets('majority', all, rng()).length, 3);
  t.is(selectTargets('minority-third', nodes(7), rng()).length, 2);
  t.deepEqual(selectTargets('all', all, rng()), all);
  t.deepEqual(selectTargets(['n2', 'n2', 'n5'], all, rng()), ['n2', 'n5']);
  t.deepEqual(selectTargets('primaries', all, rng(), ['n4']), ['n4']);
  t.throws(() => selectTargets('primaries', all, rng()), { message: /current primaries/ });
  t.throws(() => selectTargets(['n9'], all, rng()), { message: /unknown target node\(s\): n9/ });
  t.throws(() => selectTargets('minority', nodes(2), rng()), { message: /has no minority/ });
  t.throws(() => selectTargets('most', all, rng()), { message: /unknown target selector "most"/ });
  for (let s = 0; s < 50; s++) {
    const sub = selectTargets(undefined, all, new Rng(s));
    t.true(sub.length >= 1 && sub.length <= 5);
  }
});
