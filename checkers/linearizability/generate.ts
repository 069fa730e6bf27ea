import type { HistoryEvent } from '../../src/core/history/event.ts';

/**
 * Generated single-register cas-register histories with a known answer, for the benchmark and the
 * property tests.
 *
 * `processes` client slots run concurrently. Each op goes through three moments, each one a random
 * step of the simulation: the invocation (an event), the linearization point (the op is applied to the
 * register, not recorded), and the completion (an event). So every history is linearizable by
 * construction. A fraction `infoRate` of the writes and cas ops end `info` (the client gave up): half of
 * them took effect and half did not, and the slot continues as a fresh process (Jepsen's rule).
 *
 * Values: with `values: 0` (the default) every write and cas writes a value never written before, which
 * makes a stale read provably illegal; with `values: N` they come from 0..N-1 (Jepsen's `(rand-int 5)`
 * style), which makes reads prune less. `staleRead: true` makes one read in the middle of the history
 * return the value of an ok write w1 that an ok write w2 overwrote, where w1 completed before w2 was
 * invoked and w2 completed before the read was invoked: with unique values no op can restore it, so the
 * history is not linearizable.
 */
export interface CasRegisterGenOptions {
  ops: number;
  processes?: number;
  /** Fraction of writes and cas ops that end `info`; default 0.1. */
  infoRate?: number;
  /** Fractions of reads and writes; the rest are cas. Default 0.5 / 0.25. */
  readRate?: number;
  writeRate?: number;
  /** 0: unique values (default); N: values drawn from 0..N-1. */
  values?: number;
  staleRead?: boolean;
  seed?: number;
}

/** What the generator did, filled in as it runs. */
export interface GeneratedInfo {
  /** Index of the injected stale read's invocation; unset when `staleRead` found no place for one. */
  staleReadInvoke?: number;
}

/** mulberry32: reproducible from the seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const IDLE = 0;
const INVOKED = 1;
const APPLIED = 2;

interface Slot {
  process: number;
  stage: number;
  f: 'read' | 'write' | 'cas';
  input: unknown;
  output: unknown;
  completion: 'ok' | 'fail' | 'info';
  invokedAt: number;
  /** For the stale-read injection: the overwritten value this read returns, or undefined. */
  stale: number | undefined;
}

/** The events of one generated history, in order, in batches (so 10M-op histories stream to disk). */
export function* generateCasRegisterEvents(
  o: CasRegisterGenOptions,
  batchSize = 8192,
  info: GeneratedInfo = {},
): Generator<HistoryEvent[]> {
  const rand = rng(o.seed ?? 1);
  const nProc = o.processes ?? 20;
  const infoRate = o.infoRate ?? 0.1;
  const readRate = o.readRate ?? 0.5;
  const writeRate = o.writeRate ?? 0.25;
  const domain = o.values ?? 0;
  let fresh = 1;
  const newValue = () => (domain > 0 ? Math.floor(rand() * domain) : fresh++);
  let reg: number | null = null;
  let nextProcess = nProc;
  const slots: Slot[] = Array.from({ length: nProc }, (_, p) => ({
    process: p,
    stage: IDLE,
    f: 'read',
    input: null,
    output: null,
    completion: 'ok',
    invokedAt: 0,
    stale: undefined,
  }));
  // Stale-read bookkeeping: the last two ok writes in real-time order (w1 completed before w2 began).
  let staleDone = !o.staleRead;
  let lastOkWrite: { value: number; invokedAt: number; completedAt: number } | null = null;
  let overwritten: number | null = null;
  let overwrittenAt = Number.POSITIVE_INFINITY;
  let invoked = 0;
  let busy = 0;
  let index = 0;
  let batch: HistoryEvent[] = [];
  const emit = (type: HistoryEvent['type'], s: Slot, value: unknown) => {
    batch.push({ index, type, f: s.f, value, process: s.process, time: index, node: null, faultEpoch: null });
    index++;
  };
  while (invoked < o.ops || busy > 0) {
    const s = slots[Math.floor(rand() * nProc)] as Slot;
    if (s.stage === IDLE) {
      if (invoked >= o.ops) continue;
      invoked++;
      busy++;
      const r = rand();
      s.f = r < readRate ? 'read' : r < readRate + writeRate ? 'write' : 'cas';
      s.input = s.f === 'read' ? null : s.f === 'write' ? newValue() : [null, newValue()];
      if (s.f === 'cas') (s.input as unknown[])[0] = rand() < 0.5 ? reg : newValue();
      s.completion = s.f !== 'read' && rand() < infoRate ? 'info' : 'ok';
      s.stale = undefined;
      if (
        !staleDone &&
        s.f === 'read' &&
        invoked > o.ops / 2 &&
        overwritten !== null &&
        overwrittenAt < index
      ) {
        s.stale = overwritten;
        staleDone = true;
        info.staleReadInvoke = index;
      }
      s.invokedAt = index;
      s.stage = INVOKED;
      emit('invoke', s, s.input);
    } else if (s.stage === INVOKED) {
      // The linearization point. An info op takes effect or not, at random.
      const applies = s.completion !== 'info' || rand() < 0.5;
      if (s.f === 'read') s.output = s.stale ?? reg;
      else if (s.f === 'write') {
        if (applies) reg = s.input as number;
        s.output = s.input;
      } else {
        const [a, b] = s.input as [number | null, number];
        const hit = a === reg;
        if (s.completion !== 'info') s.completion = hit ? 'ok' : 'fail';
        if (hit && applies) reg = b;
        s.output = s.input;
      }
      s.stage = APPLIED;
    } else {
      if (s.f === 'write' && s.completion === 'ok' && domain === 0) {
        const w = { value: s.input as number, invokedAt: s.invokedAt, completedAt: index };
        if (lastOkWrite && lastOkWrite.completedAt < w.invokedAt) {
          overwritten = lastOkWrite.value;
          overwrittenAt = index;
        }
        lastOkWrite = w;
      }
      emit(s.completion, s, s.f === 'read' || s.completion === 'ok' ? s.output : s.input);
      if (s.completion === 'info') s.process = nextProcess++;
      s.stage = IDLE;
      busy--;
    }
    if (batch.length >= batchSize) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** The whole generated history as one array of events. */
export function generateCasRegisterHistory(
  o: CasRegisterGenOptions,
  info: GeneratedInfo = {},
): HistoryEvent[] {
  const out: HistoryEvent[] = [];
  for (const b of generateCasRegisterEvents(o, 8192, info)) for (const e of b) out.push(e);
  return out;
}
