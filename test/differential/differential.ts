import fc from 'fast-check';
import { checkOperations } from '../../checkers/linearizability/check.ts';
import { createModel, type ModelOptions } from '../../checkers/linearizability/models/index.ts';
import { actionsArb, historyText, simulate, toOperations } from './generate.ts';
import { type RefOptions, referenceLinearizable, referenceModel } from './reference-linearizability.ts';

/**
 * The differential runs shared by the CI test (fixed seeds) and `npm run fuzz:oracles` (as many as asked):
 * one generated history, faultline's verdict and the reference's, compared. A disagreement throws with the
 * shrunk history as JSON lines, ready for `faultline check --checker linearizable --model …`.
 */
export interface LinearizabilityCase {
  model: string;
  options: RefOptions & ModelOptions;
  /** The generator's history shape, when not the model's own (values of another kind). */
  shape?: string;
}

/** Every built-in model, under Knossos's semantics and, where they differ, faultline's clients'. */
export const LINEARIZABILITY_CASES: LinearizabilityCase[] = [
  { model: 'register', options: {} },
  { model: 'register', options: { nilRead: 'value' } },
  { model: 'register', options: { nilRead: 'value' }, shape: 'register-sets' },
  { model: 'cas-register', options: {} },
  { model: 'cas-register', options: { nilRead: 'value', failedCas: 'mismatch' } },
  { model: 'multi-register', options: {} },
  { model: 'multi-register', options: { nilRead: 'value' } },
  { model: 'kv', options: {} },
  { model: 'set', options: {} },
  { model: 'fifo-queue', options: {} },
  { model: 'mutex', options: {} },
  { model: 'counter', options: {} },
];

export const caseLabel = (c: LinearizabilityCase) =>
  `${c.model}${Object.keys(c.options).length ? ` ${JSON.stringify(c.options)}` : ''}${c.shape ? ` (${c.shape})` : ''}`;

export interface Tally {
  histories: number;
  valid: number;
  invalid: number;
}

async function faultlineVerdict(c: LinearizabilityCase, ops: ReturnType<typeof simulate>): Promise<boolean> {
  const model = createModel(c.model, c.options);
  if (!model) throw new Error(`no model ${c.model}`);
  const out = await checkOperations(model, toOperations(ops));
  if (out.valid === 'unknown') throw new Error(`faultline undecided on ${historyText(ops)}`);
  return out.valid;
}

/** Compare faultline with the reference on `numRuns` histories; throws on the first disagreement. */
export async function linearizabilityDifferential(
  c: LinearizabilityCase,
  numRuns: number,
  seed: number,
  maxActions = 22,
): Promise<Tally> {
  const tally: Tally = { histories: 0, valid: 0, invalid: 0 };
  const reference = referenceModel(c.model, c.options);
  const details = await fc.check(
    fc.asyncProperty(actionsArb(maxActions), fc.boolean(), async (actions, open) => {
      const ops = simulate(c.shape ?? c.model, actions, open);
      const want = referenceLinearizable(reference, ops);
      const got = await faultlineVerdict(c, ops);
      tally.histories++;
      if (want) tally.valid++;
      else tally.invalid++;
      return got === want;
    }),
    { numRuns, seed },
  );
  if (details.failed) {
    const [actions, open] = details.counterexample ?? [[], false];
    const ops = simulate(c.shape ?? c.model, actions, open);
    throw new Error(
      `${caseLabel(c)}: faultline says ${!referenceLinearizable(reference, ops) ? 'linearizable' : 'not linearizable'}, the reference the opposite (seed ${seed}, shrunk ${details.numShrinks} times${details.errorInstance ? `, ${String(details.errorInstance)}` : ''}):\n${historyText(ops)}`,
    );
  }
  return tally;
}
