import fc from 'fast-check';
import { counterChecker } from '../../checkers/catalogue/counter.ts';
import { setChecker } from '../../checkers/catalogue/set.ts';
import { totalQueueChecker } from '../../checkers/catalogue/total-queue.ts';
import { uniqueIdsChecker } from '../../checkers/catalogue/unique-ids.ts';
import { checkSafe } from '../../checkers/compose.ts';
import type { Checker } from '../../checkers/types.ts';
import type { Tally } from './differential.ts';
import { actionsArb, historyText, simulate, toOperations } from './generate.ts';
import {
  referenceCounter,
  referenceSet,
  referenceTotalQueue,
  referenceUniqueIds,
  type Verdict,
} from './reference-catalogue.ts';
import type { RefOp } from './reference-linearizability.ts';

/**
 * Catalogue checkers against their reference on random histories (the verdicts must be equal) and on
 * honest ones, made by a correct system (the checker must never say false: a false positive).
 */
export interface CatalogueCase {
  checker: string;
  shape: string;
  run: Checker<never>;
  reference: (ops: readonly RefOp[]) => Verdict;
}

export const CATALOGUE_CASES: CatalogueCase[] = [
  { checker: 'set', shape: 'set', run: setChecker as Checker<never>, reference: referenceSet },
  {
    checker: 'total-queue',
    shape: 'total-queue',
    run: totalQueueChecker as Checker<never>,
    reference: referenceTotalQueue,
  },
  {
    checker: 'counter',
    shape: 'counter-bounds',
    run: counterChecker as Checker<never>,
    reference: referenceCounter,
  },
  {
    checker: 'unique-ids',
    shape: 'unique-ids',
    run: uniqueIdsChecker as Checker<never>,
    reference: referenceUniqueIds,
  },
];

export async function catalogueDifferential(
  c: CatalogueCase,
  numRuns: number,
  seed: number,
  honest: boolean,
): Promise<Tally & { unknown: number }> {
  const tally = { histories: 0, valid: 0, invalid: 0, unknown: 0 };
  const verdict = async (ops: RefOp[]) =>
    (await checkSafe(c.checker, c.run, toOperations(ops), {})).valid as Verdict;
  const details = await fc.check(
    fc.asyncProperty(actionsArb(24), fc.boolean(), async (actions, open) => {
      const ops = simulate(c.shape, actions, open, honest);
      const got = await verdict(ops);
      tally.histories++;
      if (got === true) tally.valid++;
      else if (got === false) tally.invalid++;
      else tally.unknown++;
      return honest ? got !== false : got === c.reference(ops);
    }),
    { numRuns, seed },
  );
  if (details.failed) {
    const [actions, open] = details.counterexample ?? [[], false];
    const ops = simulate(c.shape, actions, open, honest);
    throw new Error(
      `${c.checker}: faultline says ${String(await verdict(ops))}, ${honest ? 'on a history of a correct system' : `the reference ${String(c.reference(ops))}`} (seed ${seed}, shrunk ${details.numShrinks} times${details.errorInstance ? `, ${String(details.errorInstance)}` : ''}):\n${historyText(ops)}`,
    );
  }
  return tally;
}
