import { ILLEGAL, type Model, ModelInputError } from '../model.ts';

/**
 * A mutex (Knossos' model): acquire succeeds only when free, release only when held. Failed ops did
 * not happen; an op with unknown outcome may have taken effect at any point after its invocation.
 */
export interface MutexInput {
  f: 'acquire' | 'release';
}

export function makeMutex(): Model<boolean, MutexInput, null> {
  return {
    name: 'mutex',
    init: () => false,
    step(locked, input) {
      if (input.f === 'acquire') return locked ? ILLEGAL : true;
      return locked ? false : ILLEGAL;
    },
    equal: (a, b) => a === b,
    hash: (s) => (s ? 0x6b43a9b5 : 0x1d8e4e27),
    encode(op) {
      if (op.f !== 'acquire' && op.f !== 'release') {
        throw new ModelInputError(
          `model mutex has no function ${JSON.stringify(op.f)} (expected acquire, release)`,
        );
      }
      if (op.type === 'fail') return null;
      return { input: { f: op.f }, output: null };
    },
    describeOperation: (input) => input.f,
    describeState: (locked) => (locked ? 'held' : 'free'),
  };
}
