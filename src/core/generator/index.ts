/** Generators with Jepsen's names (reference §4). See ./types.ts for the peek/take protocol. */

export {
  any,
  clients,
  eachProcess,
  eachThread,
  flipFlop,
  independentConcurrent,
  mix,
  nemesis,
  onThreads,
  phases,
  reserve,
  synchronize,
  then,
  untilOk,
} from './compose.ts';
export { cycle, EMPTY, filter, fMap, freeThread, gen, limit, map, once, repeat } from './core.ts';
export { Rng } from './rng.ts';
export { delay, logOp, rate, SECOND, sleep, stagger, timeLimit } from './time.ts';
export * from './types.ts';
