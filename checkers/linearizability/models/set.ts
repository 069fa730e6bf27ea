import { canonicalJson } from '../../../src/core/history/values.ts';
import { ILLEGAL, type Model, ModelInputError, setItemsOrNull, show } from '../model.ts';

/**
 * A grow-only set: add an element, read the whole set. The state is the sorted list of the elements'
 * canonical JSON encodings (object keys sorted), so equality and hashing are plain string work. A read listing an element twice is
 * never legal.
 */
export interface SetInput {
  f: 'add' | 'read';
  /** Canonical JSON of the added element. */
  elem: string;
}

export interface SetOutput {
  /** Sorted JSON encodings of what a read returned. */
  items: string[];
}

type SetState = readonly string[];

function readItems(v: unknown): unknown[] {
  const tagged = setItemsOrNull(v);
  if (tagged) return tagged;
  if (Array.isArray(v)) return v;
  if (v === null) return [];
  throw new ModelInputError(`set read result must be a set or a list, got ${show(v)}`);
}

function sameList(a: SetState, b: SetState): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function makeSetModel(): Model<SetState, SetInput, SetOutput> {
  return {
    name: 'set',
    init: () => [],
    step(state, input, output) {
      if (input.f === 'read') return sameList(state, output.items) ? state : ILLEGAL;
      // Binary search for the insertion point keeps the state sorted.
      let lo = 0;
      let hi = state.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((state[mid] as string) < input.elem) lo = mid + 1;
        else hi = mid;
      }
      if (state[lo] === input.elem) return state;
      return [...state.slice(0, lo), input.elem, ...state.slice(lo)];
    },
    equal: sameList,
    readOnly: (input) => input.f === 'read',
    hash(state) {
      let h = 0x9e3779b9;
      for (const s of state) {
        for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
        h = Math.imul(h ^ 0xff, 0x01000193);
      }
      return h | 0;
    },
    encode(op) {
      if (op.f === 'add') {
        if (op.type === 'fail') return null;
        return { input: { f: 'add', elem: canonicalJson(op.input) }, output: { items: [] } };
      }
      if (op.f === 'read') {
        if (op.type !== 'ok') return null;
        // Elements as canonical JSON: one read back with its fields in another order is the same element.
        const items = readItems(op.output).map(canonicalJson).sort();
        return { input: { f: 'read', elem: '' }, output: { items } };
      }
      throw new ModelInputError(`model set has no function ${JSON.stringify(op.f)} (expected add, read)`);
    },
    describeOperation(input, output) {
      return input.f === 'add' ? `add(${input.elem})` : `read → #{${output.items.join(' ')}}`;
    },
    describeState: (s) => `#{${s.join(' ')}}`,
  };
}
