import { checkOperations } from '../../checkers/linearizability/check.ts';
import { DEFAULT_TIMEOUT_MS } from '../../checkers/linearizability/index.ts';
import { createModel } from '../../checkers/linearizability/models/index.ts';
import { conformance } from '../helpers/conformance.ts';
import { loadFixtureOps, porcupineFixtures } from './porcupine-fixtures.ts';

const test = conformance("Porcupine's reference histories");

const fixtures = porcupineFixtures();

test('all 109 Porcupine histories are present', (t) => {
  t.is(fixtures.length, 109);
});

// One test per history: the verdict must match what the upstream Go tests assert (expected.json).
for (const f of fixtures) {
  test(`porcupine ${f.path} is ${f.linearizable ? 'linearizable' : 'not linearizable'}`, async (t) => {
    const model = createModel(f.model, f.options);
    if (!model) throw new Error(f.model);
    const outcome = await checkOperations(model, await loadFixtureOps(f), { timeoutMs: DEFAULT_TIMEOUT_MS });
    t.is(outcome.valid, f.linearizable);
    if (!f.linearizable) t.true(outcome.failing.length > 0);
  });
}

test('kv/c50-bad is invalid within the default timeout on every run, naming the same failing key', async (t) => {
  const f = fixtures.find((x) => x.path === 'kv/c50-bad.txt');
  if (!f) throw new Error('c50-bad missing');
  const ops = await loadFixtureOps(f);
  const failingKeys = new Set<string>();
  for (let run = 0; run < 5; run++) {
    const model = createModel('kv');
    if (!model) throw new Error('kv');
    const outcome = await checkOperations(model, ops, { timeoutMs: DEFAULT_TIMEOUT_MS });
    t.is(outcome.valid, false);
    t.false(outcome.timedOut);
    failingKeys.add(outcome.failing.map((i) => outcome.partitions[i]?.key).join(','));
  }
  t.is(failingKeys.size, 1, 'the inline scheduler is deterministic');
});

test("without greedy reads the search is Porcupine's: step counts equal the Go baseline", async (t) => {
  // Porcupine's Step-call counts are deterministic for single-register histories; equal counts show
  // the same search (same entry order, same cache pruning).
  const { readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { porcupineDir } = await import('./porcupine-fixtures.ts');
  const go = JSON.parse(readFileSync(join(porcupineDir, 'go-baseline.json'), 'utf8')) as {
    files: Record<string, { stepCalls: number }>;
  };
  // Illegal files only: on a valid history Porcupine also linearizes every pending op at the end,
  // where faultline stops as soon as all completed ops are placed (pending ones may never happen).
  for (const path of ['jepsen/etcd_040.log', 'jepsen/etcd_057.log', 'jepsen/etcd_099.log']) {
    const f = fixtures.find((x) => x.path === path);
    if (!f) throw new Error(path);
    const model = createModel('cas-register', f.options);
    if (!model) throw new Error('cas-register');
    const ops = await loadFixtureOps(f);
    const exact = await checkOperations(model, ops, { greedyReads: false });
    t.is(exact.partitions[0]?.steps, go.files[path]?.stepCalls, path);
    // Greedy reads only prune: same verdict, never more steps.
    const greedy = await checkOperations(model, ops);
    t.is(greedy.valid, exact.valid, path);
    t.true((greedy.partitions[0]?.steps ?? 0) <= (exact.partitions[0]?.steps ?? 0), path);
  }
});
