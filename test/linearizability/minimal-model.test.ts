import test from 'ava';
import { checkOperations } from '../../checkers/linearizability/check.ts';
import { completeModel, ILLEGAL, type Model } from '../../checkers/linearizability/model.ts';
import { createModel, models } from '../../checkers/linearizability/models/index.ts';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { pairEvents } from '../../src/core/history/pair.ts';

/**
 * A model with only what the search needs (init, step, encode): a register with structured states, so
 * the defaulted equality and hash must be structural for the search to intern its states.
 */
const bare: Model<{ v: number | null }, { f: string; v: number | null }, number | null> = {
  init: () => ({ v: null }),
  step: (s, input, output) => {
    if (input.f === 'write') return { v: input.v };
    return output === s.v ? s : ILLEGAL;
  },
  encode: (op: Operation) =>
    op.f === 'write'
      ? { input: { f: 'write', v: op.input as number }, output: null }
      : op.type === 'ok'
        ? { input: { f: 'read', v: null }, output: op.output as number | null }
        : null,
};

function history(reads: (number | null)[]): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  let time = 0;
  const push = (type: 'invoke' | 'ok', f: string, value: unknown, process: number) =>
    events.push({
      index: events.length,
      type,
      f,
      value,
      process,
      time: time++,
      node: 'n1',
      faultEpoch: null,
    } as HistoryEvent);
  push('invoke', 'write', 1, 0);
  push('ok', 'write', 1, 0);
  for (const r of reads) {
    push('invoke', 'read', null, 1);
    push('ok', 'read', r, 1);
  }
  return events;
}

test('the defaults are applied once, and a complete model is returned as it is', (t) => {
  const m = completeModel(bare);
  t.is(m.name, 'model');
  t.true(m.equal({ v: 1 }, { v: 1 }), 'structural equality');
  t.is(m.hash({ v: 1 }), m.hash({ v: 1 }));
  t.is(m.describeState({ v: 1 }), '{v 1}');
  t.is(m.describeOperation({ f: 'read', v: null }, 1), '{f "read", v nil} → 1');
  t.is(m.step, bare.step, 'its own members are kept');
  const kv = createModel('kv');
  t.truthy(kv);
  t.is<unknown, unknown>(completeModel(kv as Model), kv, 'a model that declares everything is not wrapped');
});

test('a plugin model with only init, step and encode is checked by the search', async (t) => {
  models.register(
    'bare-register',
    { name: 'bare-register', ops: ['read', 'write'], create: () => bare },
    'test',
  );
  const model = createModel('bare-register');
  if (!model) throw new Error('bare-register');
  t.true((await checkOperations(model, pairEvents(history([1, 1])).ops)).valid);
  const stale = await checkOperations(model, pairEvents(history([1, null])).ops);
  t.false(stale.valid);
});
