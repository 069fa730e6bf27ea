import { deepEqual, hashValue, ILLEGAL, type Model, ModelInputError, show } from '../model.ts';

/**
 * A FIFO queue: enqueue a value; dequeue returns the oldest one. A dequeue that returned nil saw an
 * empty queue. A dequeue with unknown result removes the head if there is one. Failed ops did not
 * happen.
 */
export interface QueueInput {
  f: 'enqueue' | 'dequeue';
  value: unknown;
}

export interface QueueOutput {
  known: boolean;
  value: unknown;
}

type QueueState = readonly unknown[];

export function makeFifoQueue(): Model<QueueState, QueueInput, QueueOutput> {
  return {
    name: 'fifo-queue',
    init: () => [],
    step(state, input, output) {
      if (input.f === 'enqueue') return [...state, input.value];
      if (!output.known) return state.length === 0 ? state : state.slice(1);
      if (output.value === null || output.value === undefined) return state.length === 0 ? state : ILLEGAL;
      if (state.length === 0 || !deepEqual(state[0], output.value)) return ILLEGAL;
      return state.slice(1);
    },
    equal: (a, b) => a.length === b.length && a.every((x, i) => deepEqual(x, b[i])),
    // A dequeue that saw nil is legal only on the empty queue, which it leaves empty.
    readOnly: (input, output) =>
      input.f === 'dequeue' && output.known && (output.value === null || output.value === undefined),
    hash: hashValue,
    encode(op) {
      if (op.f !== 'enqueue' && op.f !== 'dequeue') {
        throw new ModelInputError(
          `model fifo-queue has no function ${JSON.stringify(op.f)} (expected enqueue, dequeue)`,
        );
      }
      if (op.type === 'fail') return null;
      const known = op.type === 'ok';
      if (op.f === 'enqueue')
        return { input: { f: 'enqueue', value: op.input }, output: { known, value: null } };
      return { input: { f: 'dequeue', value: null }, output: { known, value: known ? op.output : null } };
    },
    describeOperation(input, output) {
      if (input.f === 'enqueue') return `enqueue(${show(input.value)})`;
      return `dequeue → ${output.known ? show(output.value) : '?'}`;
    },
    describeState: (s) => `[${s.map(show).join(' ')}]`,
  };
}
