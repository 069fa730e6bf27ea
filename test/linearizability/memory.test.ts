import test from 'ava';
import { Int32Pool, searchBuffers } from '../../checkers/linearizability/buffer-pool.ts';
import { type CheckOutcome, checkOperations } from '../../checkers/linearizability/check.ts';
import { generateCasRegisterHistory } from '../../checkers/linearizability/generate.ts';
import { type AnyModel, ILLEGAL, type StateStore } from '../../checkers/linearizability/model.ts';
import { createModel } from '../../checkers/linearizability/models/index.ts';
import type { KvState } from '../../checkers/linearizability/models/kv.ts';
import { CACHE_LIMIT } from '../../checkers/linearizability/search.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { conformance } from '../helpers/conformance.ts';
import { searchingEveryOp } from './helpers.ts';
import { loadFixtureOps, porcupineFixtures } from './porcupine-fixtures.ts';

const fixtureTest = conformance('Porcupine histories: the kv state store');

/**
 * The checker's memory reuse: searches take their cache and state arrays from a shared pool and give
 * them back when decided, and the kv model keeps its states in typed arrays (a state store). Neither
 * may change a result: reused arrays hold stale values, and the store must intern exactly as the
 * model's `step` and `equal` do.
 */

function model(name: string): AnyModel {
  const m = createModel(name);
  if (!m) throw new Error(name);
  return m;
}

/** An outcome without its timings (and without the encoded ops, compared by the verdicts). */
function comparable(o: CheckOutcome): unknown {
  return {
    valid: o.valid,
    failing: o.failing,
    partitions: o.partitions.map(({ ms: _ms, ops: _ops, ...rest }) => rest),
  };
}

/** Fill the pool with arrays of stale values, of every length the searches take; returned to keep them alive. */
function poisonPool(): Int32Array[] {
  const keep: Int32Array[] = [];
  for (let len = 2; len <= 1 << 20; len *= 2) {
    for (let k = 0; k < 2; k++) {
      const a = new Int32Array(len).fill(0x5a5a5a5a);
      keep.push(a);
      searchBuffers.give(a);
    }
  }
  return keep;
}

test('the pool hands back released arrays of the same length, zeroed when asked', (t) => {
  const pool = new Int32Pool();
  const a = pool.take(1024, false);
  a.fill(7);
  pool.give(a);
  t.is(pool.size, 1);
  t.not(pool.take(2048, true), a, 'another length is a new array');
  const again = pool.take(1024, false);
  t.is(again, a);
  t.is(again[5], 7, 'not zeroed unless asked');
  pool.give(again);
  const zeroed = pool.take(1024, true);
  t.is(zeroed, a);
  t.true(zeroed.every((x) => x === 0));
  t.is(pool.size, 0);
  for (let k = 0; k < Int32Pool.PER_LENGTH + 5; k++) pool.give(new Int32Array(16));
  t.is(pool.size, Int32Pool.PER_LENGTH, 'at most PER_LENGTH arrays kept per length');
  pool.clear();
  t.is(pool.size, 0);
});

test('a search with reused arrays holding stale values decides as with fresh ones (cache emptied, many pages)', async (t) => {
  const ops = pairEvents(
    generateCasRegisterHistory({ ops: 10_000, processes: 20, infoRate: 0.1, seed: 7 }),
  ).ops;
  // Every op searched: left out, the history's crashed writes of unread values would leave little to search.
  const everyOp = searchingEveryOp(model('cas-register'));
  const run = async () => comparable(await checkOperations(everyOp, ops, { timeoutMs: 0 }));
  searchBuffers.clear();
  const fresh = await run();
  const p0 = (fresh as { partitions: { cacheSize: number }[] }).partitions[0];
  t.true((p0?.cacheSize ?? 0) > 2 * CACHE_LIMIT, 'the cache was emptied and refilled');
  t.true(searchBuffers.size > 0, 'the decided search gave its arrays back');
  t.deepEqual(await run(), fresh, 'arrays released by the previous check');
  searchBuffers.clear();
  const keep = poisonPool();
  t.deepEqual(await run(), fresh, 'arrays full of stale values');
  t.true(keep.length > 0);
});

fixtureTest(
  'kv: the state store gives the same check as states held as values, with fresh or reused arrays',
  async (t) => {
    const fixtures = porcupineFixtures().filter((f) => ['kv/c50-ok.txt', 'kv/c50-bad.txt'].includes(f.path));
    t.is(fixtures.length, 2);
    for (const f of fixtures) {
      const ops = await loadFixtureOps(f);
      const kv = model('kv');
      t.is(typeof kv.stateStore, 'function');
      const plain: AnyModel = { ...kv, stateStore: undefined };
      searchBuffers.clear();
      const values = comparable(await checkOperations(plain, ops));
      const stored = comparable(await checkOperations(kv, ops));
      t.deepEqual(stored, values, f.path);
      t.is((stored as { valid: unknown }).valid, f.linearizable);
      const keep = poisonPool();
      t.deepEqual(comparable(await checkOperations(kv, ops)), values, `${f.path}, stale arrays`);
      t.true(keep.length > 0);
    }
  },
);

/** Thue–Morse strings of length 64 and their complements: different texts, one rolling hash. */
function thueMorse(n: number, a: string, b: string): string {
  let s = '';
  for (let i = 0; i < n; i++) {
    let parity = 0;
    for (let x = i; x > 0; x >>= 1) parity ^= x & 1;
    s += parity ? b : a;
  }
  return s;
}
const TM = thueMorse(64, 'a', 'b');
const TM_NOT = thueMorse(64, 'b', 'a');

function kvOp(f: string, value: unknown, output: unknown = null): Operation {
  return { f, type: 'ok', input: value, output, key: 'k' } as Operation;
}

/** Op classes (inputs and outputs) for the kv store: puts, appends and gets of the given texts. */
function kvClasses(kv: AnyModel, pieces: string[], reads: string[]) {
  const enc = [
    ...pieces.flatMap((p) => [kv.encode(kvOp('put', p)), kv.encode(kvOp('append', p))]),
    ...reads.map((r) => kv.encode(kvOp('get', null, r))),
  ].map((e) => {
    if (!e) throw new Error('encode');
    return e;
  });
  return { inputs: enc.map((e) => e.input), outputs: enc.map((e) => e.output) };
}

test('kv state store: equal texts are one state however built, different texts two, even with equal hashes', (t) => {
  const kv = model('kv');
  const pieces = ['', 'a', 'b', 'ab', TM, TM_NOT];
  const { inputs, outputs } = kvClasses(kv, pieces, ['ab', TM, TM_NOT, '']);
  const store = kv.stateStore?.(inputs, outputs) as StateStore<KvState>;
  const put = (p: string) => 2 * pieces.indexOf(p);
  const append = (p: string) => 2 * pieces.indexOf(p) + 1;
  const get = (r: string) => 2 * pieces.length + ['ab', TM, TM_NOT, ''].indexOf(r);

  t.is(store.size, 1);
  t.deepEqual(store.value(0), kv.init());
  t.is(store.step(0, put('')), 0, 'put of the initial value is the initial state');
  t.is(store.step(0, append('')), 0, 'appending nothing changes nothing');
  const ab = store.step(store.step(0, append('a')), append('b'));
  t.is(store.step(0, append('ab')), ab, 'a + b and ab');
  t.is(store.step(0, put('ab')), ab, 'a put of the same text');
  t.is(store.step(0, get('ab')), -1);
  t.is(store.step(ab, get('ab')), ab, 'a read of the text is legal and changes nothing');
  const ba = store.step(store.step(0, put('b')), append('a'));
  t.not(ba, ab);
  t.is(store.step(ba, get('ab')), -1);

  const tm = store.step(0, put(TM));
  const tmNot = store.step(0, put(TM_NOT));
  t.is(store.value(tm).h, store.value(tmNot).h, 'the hashes collide');
  t.not(tm, tmNot, 'different texts, equal hash and length: different states');
  t.is(store.step(tm, get(TM)), tm);
  t.is(store.step(tm, get(TM_NOT)), -1, 'a read of the colliding text is illegal');
  // The same texts built piece by piece from a put of their first half.
  const half = (s: string) => s.slice(0, 32);
  const { inputs: in2, outputs: out2 } = kvClasses(
    kv,
    [half(TM), TM.slice(32), half(TM_NOT), TM_NOT.slice(32)],
    [],
  );
  const store2 = kv.stateStore?.([...inputs, ...in2], [...outputs, ...out2]) as StateStore<KvState>;
  const base = inputs.length;
  const tm2 = store2.step(store2.step(0, base), base + 3);
  const tmNot2 = store2.step(store2.step(0, base + 4), base + 7);
  t.is(store2.value(tm2).s, TM);
  t.is(store2.value(tmNot2).s, TM_NOT);
  t.is(store2.step(0, put(TM)), tm2, 'the whole text put equals the one built in two pieces');
  t.is(store2.step(0, put(TM_NOT)), tmNot2);
  t.not(tm2, tmNot2);
  store.release();
  store2.release();
});

test('kv state store agrees with step and equal on every state reached from several initial values', (t) => {
  for (const initialValue of [undefined, 'x', TM]) {
    const kv = createModel('kv', { initialValue }) as AnyModel;
    const pieces = ['', 'a', 'b', 'ab', 'ba', TM.slice(0, 32), TM_NOT.slice(32)];
    const reads = ['', 'a', 'ab', 'xab', 'aab', 'xa', TM, `${TM}a`];
    const { inputs, outputs } = kvClasses(kv, pieces, reads);
    const store = kv.stateStore?.(inputs, outputs) as StateStore<KvState>;
    // Reference: the model's own states, interned by `equal` (their text, as `equal` compares it).
    const states: KvState[] = [kv.init() as KvState];
    const ids = new Map<string, number>([[states[0]?.s as string, 0]]);
    for (let id = 0; id < states.length && states.length < 3000; id++) {
      const state = states[id] as KvState;
      if (state.s.length > 160) continue;
      for (let c = 0; c < inputs.length; c++) {
        const next = kv.step(state, inputs[c], outputs[c]);
        const got = store.step(id, c);
        if (next === ILLEGAL) {
          if (got !== -1) t.fail(`${JSON.stringify(state.s)} class ${c}: legal in the store`);
          continue;
        }
        const s = (next as KvState).s;
        let want = ids.get(s);
        if (want === undefined) {
          want = states.length;
          states.push(next as KvState);
          ids.set(s, want);
        } else if (!kv.equal(states[want], next)) t.fail('reference interning');
        if (got !== want) t.fail(`${JSON.stringify(state.s)} class ${c}: id ${got}, expected ${want}`);
      }
    }
    t.is(store.size, states.length);
    t.true(states.length > 1000);
    for (let id = 0; id < states.length; id += 97) t.deepEqual(store.value(id), states[id]);
    store.release();
  }
});
