import test from 'ava';
import fc from 'fast-check';
import { classifyRels } from '../../checkers/elle/check.ts';
import { anyCycle, CYCLE_SPECS, localGraph, searchCycle } from '../../checkers/elle/cycles.ts';
import { buildCsr, EdgeList, RW, tarjan, WR, WW } from '../../checkers/elle/graph.ts';

function ring(n: number, rels: number[]) {
  const e = new EdgeList();
  for (let i = 0; i < n; i++) e.add(i, (i + 1) % n, rels[i % rels.length]!);
  const g = buildCsr(n, e);
  const verts = Int32Array.from({ length: n }, (_, i) => i);
  return localGraph(g, verts, new Int32Array(n).fill(-1));
}
const spec = (type: string) => CYCLE_SPECS.find((s) => s.type === type)!;

test('Tarjan is iterative: a 200,000-vertex cycle is one component (no stack overflow)', (t) => {
  const n = 200_000;
  const e = new EdgeList();
  for (let i = 0; i < n; i++) e.add(i, (i + 1) % n, WW);
  const { multi, count } = tarjan(buildCsr(n, e), WW);
  t.is(multi.length, 1);
  t.is(multi[0]!.length, n);
  t.is(count, 1);
});

test('Tarjan against reachability on small graphs, many of whose vertices have no edges', (t) => {
  // Components are the mutually reachable sets (over the masked edges), and ids number them in reverse
  // topological order: a component that reaches another has the larger id.
  const rels = [WW, WR, RW];
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 24 }),
      fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat({ max: 2 })), { maxLength: 60 }),
      fc.integer({ min: 1, max: 7 }),
      fc.nat({ max: 3 }),
      (n, raw, relMask, every) => {
        // Only some vertices have out-edges (every `every + 1`-th), so edgeless ones are met as roots and
        // as children alike.
        const e = new EdgeList();
        for (const [a, b, r] of raw) if ((a % n) % (every + 1) === 0) e.add(a % n, b % n, rels[r]!);
        const g = buildCsr(n, e);
        const reach = Array.from({ length: n }, (_, v) => {
          const seen = new Uint8Array(n);
          seen[v] = 1;
          const stack = [v];
          while (stack.length > 0) {
            const u = stack.pop()!;
            for (let i = g.offsets[u]!; i < g.offsets[u + 1]!; i++) {
              const w = g.targets[i]!;
              if ((g.masks[i]! & relMask) !== 0 && !seen[w]) {
                seen[w] = 1;
                stack.push(w);
              }
            }
          }
          return seen;
        });
        const { comp, count, cyclic, multi } = tarjan(g, relMask);
        t.is(new Set(comp).size, count);
        for (let u = 0; u < n; u++)
          for (let v = 0; v < n; v++) {
            const same = reach[u]![v] === 1 && reach[v]![u] === 1;
            t.is(comp[u] === comp[v], same, `${u}, ${v}`);
            if (!same && reach[u]![v]) t.true(comp[u]! > comp[v]!, `${u} reaches ${v}`);
          }
        const sizes = new Map<number, number>();
        for (const c of comp) sizes.set(c, (sizes.get(c) ?? 0) + 1);
        t.is(cyclic, [...sizes.values()].filter((s) => s > 1).length);
        t.deepEqual(
          multi.map((m) => [...m].sort((a, b) => a - b).join()).sort(),
          [...sizes]
            .filter(([, s]) => s > 1)
            .map(([c]) => [...comp.keys()].filter((v) => comp[v] === c).join())
            .sort(),
        );
      },
    ),
    { numRuns: 400, seed: 37 },
  );
});

test('parallel edges merge their relations; self edges are dropped', (t) => {
  const e = new EdgeList();
  e.add(0, 1, WW);
  e.add(0, 1, RW);
  e.add(1, 1, WR);
  const g = buildCsr(2, e);
  t.is(g.targets.length, 1);
  t.is(g.masks[0], WW | RW);
});

for (const n of [200, 300_000])
  test(`parallel edges merge the same way at every out-degree (few edges and many), ${n} vertices`, (t) => {
    // Vertex v gets 3v % 41 edges to a few targets, with repeats and every relation, so some vertices
    // merge by comparing with their kept edges and some through stamps. Edges are added in no particular
    // source order.
    const e = new EdgeList();
    const want = new Map<string, number>();
    let x = 7;
    const next = () => {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      return x;
    };
    const sources = Array.from({ length: Math.min(n, 400) }, () => next() % n);
    for (const v of sources)
      for (let i = 0; i < (3 * v) % 41; i++) {
        const d = (v + (next() % 23)) % n;
        const rel = [WW, WR, RW][next() % 3]!;
        e.add(v, d, rel);
        if (v !== d) want.set(`${v}>${d}`, (want.get(`${v}>${d}`) ?? 0) | rel);
      }
    const g = buildCsr(n, e);
    const got = new Map<string, number>();
    for (let v = 0; v < n; v++)
      for (let k = g.offsets[v]!; k < g.offsets[v + 1]!; k++) {
        const key = `${v}>${g.targets[k]}`;
        if (got.has(key)) t.fail(`${key} kept twice`);
        got.set(key, g.masks[k]!);
      }
    t.is(g.offsets[n], got.size);
    t.deepEqual([...got].sort(), [...want].sort());
  });

test('a search whose deadline has passed reports a timeout instead of running on', (t) => {
  const lg = ring(5000, [RW]);
  const out = searchCycle(lg, spec('G2-item'), 0, () => true);
  t.deepEqual(out, { timeout: true });
  const found = searchCycle(ring(5000, [RW]), spec('G2-item'), Number.POSITIVE_INFINITY, () => true);
  t.true(found !== null && 'cycle' in found && found.cycle.verts.length === 5000);
});

test('each search follows only its legal relations', (t) => {
  // ww, wr, rw around a triangle: a G-single-item cycle, but no G0 / G1c / G2-item.
  const lg = ring(3, [WW, WR, RW]);
  const accept = () => true;
  t.is(searchCycle(lg, spec('G0'), Number.POSITIVE_INFINITY, accept), null);
  t.is(searchCycle(lg, spec('G1c'), Number.POSITIVE_INFINITY, accept), null);
  t.is(searchCycle(lg, spec('G2-item'), Number.POSITIVE_INFINITY, accept), null);
  const single = searchCycle(lg, spec('G-single-item'), Number.POSITIVE_INFINITY, accept);
  t.truthy(single && 'cycle' in single);
  // rw, wr, rw, wr: nonadjacent, so no G2-item but a G-nonadjacent-item.
  const na = ring(4, [RW, WR, RW, WR]);
  t.is(searchCycle(na, spec('G2-item'), Number.POSITIVE_INFINITY, accept), null);
  t.is(searchCycle(na, spec('G-single-item'), Number.POSITIVE_INFINITY, accept), null);
  t.truthy(searchCycle(na, spec('G-nonadjacent-item'), Number.POSITIVE_INFINITY, accept));
});

test('cycle classification follows Elle: rw count, adjacency (with wrap-around), then wr, then ww', (t) => {
  t.is(classifyRels([WW, WW]), 'G0');
  t.is(classifyRels([WW, WR]), 'G1c');
  t.is(classifyRels([WR, RW]), 'G-single-item');
  t.is(classifyRels([RW, WR, RW, WR]), 'G-nonadjacent-item');
  t.is(classifyRels([RW, WR, WR, RW]), 'G2-item');
  t.is(classifyRels([RW, 16]), 'G-single-item-realtime');
  t.is(classifyRels([WW, 8]), 'G0-process');
});

test('the fallback after a timeout finds some cycle of the relations, to be classified by its steps', (t) => {
  const lg = ring(6, [RW, WR, RW]);
  const c = anyCycle(lg, WW | WR | RW);
  t.truthy(c);
  t.is(c!.verts.length, 6);
  t.is(classifyRels(c!.rels), 'G2-item');
  t.is(anyCycle(lg, WW | WR), null);
});
