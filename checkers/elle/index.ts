import type { Operation } from '../../src/core/history/operation.ts';
import type { CheckContext, Checker } from '../types.ts';
import {
  type ElleCheckResult,
  elleHistoryBuilder,
  keptOps,
  runElle,
  runElleOn,
  runElleReplayed,
} from './check.ts';
import type { ElleOptions } from './options.ts';

export type { CycleAnomaly, CycleStep, ElleCheckResult } from './check.ts';
export { classifyRels, elleHistoryBuilder, runElleOn } from './check.ts';
export { boundary, canonicalModel, prohibitedAnomalies } from './lattice.ts';
export { type ElleOptions, elleOptionsSchema } from './options.ts';

/**
 * Elle-class transactional checker for list-append and rw-register histories: infers dependency cycles
 * from client-observed transactions, names each anomaly, and the consistency models it rules out.
 */
export const elleChecker = {
  name: 'elle',
  check(ops: readonly Operation[], options: ElleOptions, ctx?: CheckContext): ElleCheckResult {
    return runElle(ops, options, ctx);
  },
  stream(options: ElleOptions, ctx?: CheckContext) {
    const builder = elleHistoryBuilder(options);
    // A history the caller can feed again is not held at all: a FAIL to shrink reads it again.
    // Both take ops whose values are compact trees: the builder reads them in place, and the ops kept
    // to shrink a FAIL are kept as JSON text, which a compact value writes as its plain value.
    const replay = ctx?.replay;
    if (replay)
      return {
        add: (op: Operation) => builder.add(op),
        finish: () => runElleReplayed(builder, options, ctx, replay),
        compactValues: true,
      };
    const kept = keptOps(true);
    return {
      add: (op: Operation) => {
        builder.add(op);
        kept.add(op);
      },
      finish: () => runElleOn(builder, options, ctx, kept),
      compactValues: true,
    };
  },
} satisfies Checker<ElleOptions>;
