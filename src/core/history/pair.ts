import { UserError } from '../util/errors.ts';
import type { HistoryEvent, ProcessId } from './event.ts';
import type { Operation, PairedHistory } from './operation.ts';

/**
 * Pairs each invocation with its process's next completion (Jepsen's model: a process is single-threaded).
 *
 * - `ok` / `fail` close the op with a completion time; `ok` also sets `output`.
 * - `info`, or no completion before the history ends, leaves the op open forever: `type: 'info'`,
 *   `completeTime: null` (`infoTime` keeps when the client gave up) and the process is retired.
 * - The nemesis is the exception: Jepsen records its ops as an `info` "invocation" followed by an `info`
 *   completion, so a nemesis `info` with no open op opens one, and the nemesis is never retired.
 *
 * A client completion with no open invocation, or a second invocation while one is open, is a broken
 * history: {@link PairingError} names the event.
 */
export class PairingError extends UserError {
  override readonly name: string = 'PairingError';
  constructor(
    readonly eventIndex: number,
    readonly reason: string,
  ) {
    super(`event ${eventIndex}: ${reason}`);
  }
}

export function pairEvents(events: HistoryEvent[]): PairedHistory {
  const pairer = new Pairer();
  for (const ev of events) {
    const problem = pairer.push(ev);
    if (problem) throw new PairingError(ev.index, problem);
  }
  return { events, ops: pairer.finish(), retiredProcesses: pairer.retired() };
}

/**
 * Pairs a stream of event batches without keeping the ops: `onOp` gets each op once it is final (when
 * it completes, or at the end for ops left open), so in completion order. Resolves to the op count.
 * Throws {@link PairingError} at the first broken event, as {@link pairEvents} does.
 */
export async function pairEventStream(
  batches: AsyncIterable<HistoryEvent[]>,
  onOp: (op: Operation) => void,
): Promise<number> {
  const pairer = new Pairer(false);
  pairer.onClosed = onOp;
  for await (const batch of batches) {
    for (const ev of batch) {
      const problem = pairer.push(ev);
      if (problem) throw new PairingError(ev.index, problem);
    }
  }
  pairer.finish();
  return pairer.opCount;
}

/** Client process ids below this keep their open op in an array slot (Jepsen's are small integers). */
const DIRECT_PROCESSES = 1 << 16;

/**
 * Incremental pairing, for callers that stream events (stats) and want to count problems rather than
 * stop at the first. `push` returns a problem description instead of throwing.
 */
export class Pairer {
  readonly ops: Operation[] = [];
  /** Open ops of client processes below {@link DIRECT_PROCESSES}, indexed by process (no hashing). */
  private readonly openByNumber: (Operation | undefined)[] = [];
  /** Open ops of the nemesis and of larger process ids. */
  private readonly open = new Map<ProcessId, Operation>();
  private openCount = 0;
  private readonly retiredSet = new Set<ProcessId>();
  /** When false, ops are not kept (only counted): constant memory apart from open ops. */
  constructor(private readonly keepOps = true) {}
  opCount = 0;
  /** Called for every op when it completes or, at finish, for every op still open. */
  onClosed?: (op: Operation) => void;

  push(ev: HistoryEvent): string | undefined {
    const p = ev.process;
    const direct = typeof p === 'number' && p < DIRECT_PROCESSES;
    const current = direct ? this.openByNumber[p] : this.open.get(p);
    if (ev.type === 'invoke' || (p === 'nemesis' && ev.type === 'info' && current === undefined)) {
      if (current !== undefined) {
        return `process ${p} invoked again while its op from event ${current.invokeIndex} is still open`;
      }
      const op: Operation = {
        id: this.opCount++,
        process: p,
        f: ev.f,
        type: 'info',
        input: ev.value,
        output: null,
        invokeIndex: ev.index,
        completeIndex: null,
        invokeTime: ev.time,
        completeTime: null,
        node: ev.node,
        key: ev.key,
        error: null,
        faultEpoch: ev.faultEpoch,
        infoTime: null,
      };
      if (typeof ev.intendedTime === 'number') op.intendedTime = ev.intendedTime;
      if (this.keepOps) this.ops.push(op);
      if (direct) this.openByNumber[p] = op;
      else this.open.set(p, op);
      this.openCount++;
      return undefined;
    }
    if (current === undefined) return `process ${p} completed (${ev.type}) with no open invocation`;
    if (direct) this.openByNumber[p] = undefined;
    else this.open.delete(p);
    this.openCount--;
    current.type = ev.type;
    current.completeIndex = ev.index;
    current.error = ev.error ?? null;
    if (ev.node !== null) current.node = ev.node;
    if (ev.type === 'ok') {
      current.output = ev.value;
      current.completeTime = ev.time;
    } else if (ev.type === 'fail') {
      current.completeTime = ev.time;
    } else {
      current.infoTime = ev.time;
      if (ev.value !== null && ev.value !== undefined) current.infoValue = ev.value;
      if (p !== 'nemesis') this.retiredSet.add(p);
    }
    this.onClosed?.(current);
    return undefined;
  }

  /** Ops still open now (in invocation order). */
  openOps(): Operation[] {
    const out = [...this.open.values()];
    if (out.length < this.openCount) for (const op of this.openByNumber) if (op !== undefined) out.push(op);
    return out.sort((a, b) => a.id - b.id);
  }

  /** Ends the history: every open op stays open forever and its client process is retired. */
  finish(): Operation[] {
    for (const op of this.openOps()) {
      if (op.process !== 'nemesis') this.retiredSet.add(op.process);
      this.onClosed?.(op);
    }
    this.open.clear();
    this.openByNumber.length = 0;
    this.openCount = 0;
    return this.ops;
  }

  retired(): ProcessId[] {
    return [...this.retiredSet];
  }
}
