import fc from 'fast-check';
import { counterChecker } from '../../checkers/catalogue/counter.ts';
import { longForkChecker } from '../../checkers/catalogue/long-fork.ts';
import { noLostAckChecker } from '../../checkers/catalogue/no-lost-ack.ts';
import { queueChecker } from '../../checkers/catalogue/queue.ts';
import { sessionChecker } from '../../checkers/catalogue/session.ts';
import { setChecker } from '../../checkers/catalogue/set.ts';
import { setFullChecker } from '../../checkers/catalogue/set-full.ts';
import { totalQueueChecker } from '../../checkers/catalogue/total-queue.ts';
import { uniqueIdsChecker } from '../../checkers/catalogue/unique-ids.ts';
import { checkSafe } from '../../checkers/compose.ts';
import type { Checker } from '../../checkers/types.ts';
import type { Tally } from './differential.ts';
import { actionsArb, historyText, simulate, toOperations } from './generate.ts';
import {
  referenceCounter,
  referenceLongFork,
  referenceNoLostAck,
  referenceQueue,
  referenceSession,
  referenceSet,
  referenceSetFull,
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
  /** How tests and the fuzzer name the case (the checker's name unless options set it apart). */
  label?: string;
  shape: string;
  run: Checker<never>;
  options?: object;
  reference: (ops: readonly RefOp[]) => Verdict;
  /**
   * The least share of random histories that must come out invalid, so the comparison covers both
   * verdicts (1/20 unless set: a long fork needs two reads of one group that each saw a key the other
   * did not, which random histories of a dozen ops rarely hold; a session anomaly needs a wrong read
   * below a version the same session saw before).
   */
  invalidShare?: number;
}

export const CATALOGUE_CASES: CatalogueCase[] = [
  { checker: 'set', shape: 'set', run: setChecker as Checker<never>, reference: referenceSet },
  {
    checker: 'set-full',
    shape: 'set',
    run: setFullChecker as Checker<never>,
    reference: (ops) => referenceSetFull(ops, false),
  },
  {
    checker: 'set-full',
    label: 'set-full (linearizable)',
    shape: 'set',
    run: setFullChecker as Checker<never>,
    options: { linearizable: true },
    reference: (ops) => referenceSetFull(ops, true),
  },
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
    checker: 'counter',
    label: 'counter (negative deltas)',
    shape: 'counter-signed',
    run: counterChecker as Checker<never>,
    reference: referenceCounter,
  },
  { checker: 'queue', shape: 'fifo-queue', run: queueChecker as Checker<never>, reference: referenceQueue },
  {
    checker: 'long-fork',
    shape: 'long-fork',
    run: longForkChecker as Checker<never>,
    reference: referenceLongFork,
    invalidShare: 1 / 60,
  },
  {
    checker: 'no-lost-ack',
    shape: 'kv-writes',
    run: noLostAckChecker as Checker<never>,
    reference: referenceNoLostAck,
  },
  {
    checker: 'session',
    shape: 'versioned-register',
    run: sessionChecker as Checker<never>,
    reference: referenceSession,
    // A session's wrong read must see a version below one it saw before: one in twenty is near the edge.
    invalidShare: 1 / 30,
  },
  {
    checker: 'unique-ids',
    shape: 'unique-ids',
    run: uniqueIdsChecker as Checker<never>,
    reference: referenceUniqueIds,
  },
];

/** Events per clock tick in the coarse-clock runs. */
const COARSE_TICK = 4;

export async function catalogueDifferential(
  c: CatalogueCase,
  numRuns: number,
  seed: number,
  honest: boolean,
): Promise<Tally & { unknown: number }> {
  const tally = { histories: 0, valid: 0, invalid: 0, unknown: 0 };
  // A coarse clock (four events to a tick, as a history with millisecond times has them) must not change
  // a verdict: event order is the history's real-time order, timestamps only measure.
  const verdict = async (ops: RefOp[], coarse: boolean) =>
    (await checkSafe(c.checker, c.run, toOperations(ops, coarse ? COARSE_TICK : 1), c.options ?? {}))
      .valid as Verdict;
  const details = await fc.check(
    fc.asyncProperty(actionsArb(24), fc.boolean(), fc.boolean(), async (actions, open, coarse) => {
      const ops = simulate(c.shape, actions, open, honest);
      const got = await verdict(ops, coarse);
      tally.histories++;
      if (got === true) tally.valid++;
      else if (got === false) tally.invalid++;
      else tally.unknown++;
      return honest ? got !== false : got === c.reference(ops);
    }),
    { numRuns, seed },
  );
  if (details.failed) {
    const [actions, open, coarse] = details.counterexample ?? [[], false, false];
    const ops = simulate(c.shape, actions, open, honest);
    const tick = coarse ? COARSE_TICK : 1;
    throw new Error(
      `${c.label ?? c.checker}: faultline says ${String(await verdict(ops, coarse))}, ${honest ? 'on a history of a correct system' : `the reference ${String(c.reference(ops))}`} (seed ${seed}, shrunk ${details.numShrinks} times${details.errorInstance ? `, ${String(details.errorInstance)}` : ''}):\n${historyText(ops, tick)}`,
    );
  }
  return tally;
}
