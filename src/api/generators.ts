/**
 * `faultline/generators`: Jepsen's generator combinators, for workloads that build their own op streams
 * (a workload's `generator` returns one).
 */
export {
  any,
  cycle,
  eachProcess,
  eachThread,
  independentConcurrent,
  limit,
  mix,
  once,
  phases,
  Rng,
  repeat,
  SECOND,
  stagger,
  timeLimit,
} from '../core/generator/index.ts';
export type { Context as GeneratorContext, GenLike, GenOp } from '../core/generator/types.ts';
export { elleTransactions } from '../lib/workloads/list-append.ts';
