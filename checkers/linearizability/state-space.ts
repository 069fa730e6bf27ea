import { type AnyModel, ILLEGAL, type StateStore } from './model.ts';
import type { EncodedOps } from './op-columns.ts';

/**
 * Dense memo rows are capped at this many cells (4 bytes each: 256 KB, cache-resident). States beyond
 * the cap are stepped without memo: histories that reach that many states (growing kv strings) rarely
 * revisit a (state, op) pair; a sparse memo table measured twice as slow as re-stepping on kv/c50-ok,
 * and larger dense tables were slower too.
 */
const DENSE_CELL_LIMIT = 1 << 16;

/**
 * Interns the model states one partition reaches as small integers and memoizes `step` per
 * (state id, op class). Ops with equal input and output (the same `io` id from prepareHistory, e.g.
 * every `write 3` that completed ok) share one class, so a history of a million ops over a few values
 * has a few dozen memo columns and every lookup stays in the dense table. The search then compares states as integers, stores them in typed arrays, and calls
 * the model once per distinct (state, op) pair instead of once per visit (Porcupine re-steps every
 * visit: over a million calls on etcd_002, for a few hundred distinct pairs).
 *
 * The first states get dense memo rows (one cell per op, the fast path of the search loop).
 *
 * A model with a state store (`Model.stateStore`, kv) interns its states itself: the ids are the
 * store's, and no state value is held here.
 *
 * Memo cell encoding: 0 = not computed yet, -1 = illegal, otherwise next state id + 1.
 */
export class StateSpace {
  /** The interned states, by id; empty when the model's store holds them. */
  private readonly states: unknown[] = [];
  private store: StateStore<unknown> | null;
  /** Dense memo: row per state id below `denseRows`, one cell per op class. */
  memo: Int32Array;
  /** Op → its class (memo column). */
  readonly classOf: Int32Array;
  /** Number of classes (memo row width). */
  readonly width: number;
  denseRows: number;
  /** Model step evaluations actually performed (memo misses). */
  modelCalls = 0;
  private readonly inputs: unknown[] = [];
  private readonly outputs: unknown[] = [];
  private readonly maxDenseRows: number;
  // Intern table: open addressing over state hashes, slot = state id + 1.
  private internSlots = new Int32Array(64);
  private internHashes = new Int32Array(64);

  constructor(
    private readonly model: AnyModel,
    ops: EncodedOps,
  ) {
    this.classOf = new Int32Array(ops.length);
    // Interned class (io id) → memo column; ops with their own encoding (io -1) get a column each.
    // An array over the classes where that is cheap (one lookup per op of histories of millions),
    // else a Map (a small partition among many classes).
    const few = ops.fewClasses;
    const columns = few ? new Int32Array(ops.classCount).fill(-1) : null;
    const columnOfIo = few ? null : new Map<number, number>();
    for (let i = 0; i < ops.length; i++) {
      const io = ops.io[i] as number;
      let c = io < 0 ? -1 : columns ? (columns[io] as number) : (columnOfIo?.get(io) ?? -1);
      if (c < 0) {
        c = this.inputs.length;
        this.inputs.push(ops.inputOf(i));
        this.outputs.push(ops.outputOf(i));
        if (io >= 0) {
          if (columns) columns[io] = c;
          else columnOfIo?.set(io, c);
        }
      }
      this.classOf[i] = c;
    }
    this.width = Math.max(1, this.inputs.length);
    this.maxDenseRows = Math.max(1, Math.floor(DENSE_CELL_LIMIT / this.width));
    this.denseRows = Math.min(8, this.maxDenseRows);
    this.memo = new Int32Array(this.denseRows * this.width);
    this.store = model.stateStore?.(this.inputs, this.outputs) ?? null;
    if (!this.store) this.intern(model.init());
  }

  /** Distinct states reached so far. */
  get size(): number {
    return this.store ? this.store.size : this.states.length;
  }

  /** The state with id `sid`, as the model's value. */
  value(sid: number): unknown {
    return this.store ? this.store.value(sid) : this.states[sid];
  }

  /** Hand the model's store back (summaries are made first: `value` and `resolve` need it). */
  release(): void {
    this.store?.release();
    this.store = null;
  }

  /** The id of `state`, adding it when unseen. */
  intern(state: unknown): number {
    const h = this.model.hash(state) | 0;
    const slots = this.internSlots;
    const hashes = this.internHashes;
    const mask = slots.length - 1;
    let i = (h ^ (h >>> 16)) & mask;
    for (;;) {
      const id1 = slots[i] as number;
      if (id1 === 0) break;
      if (hashes[i] === h && this.model.equal(this.states[id1 - 1], state)) return id1 - 1;
      i = (i + 1) & mask;
    }
    const id = this.states.length;
    this.states.push(state);
    slots[i] = id + 1;
    hashes[i] = h;
    if (this.states.length * 2 > slots.length) this.growIntern();
    if (id >= this.denseRows && this.denseRows < this.maxDenseRows) this.growDense();
    return id;
  }

  /** Double the dense memo (up to its cap); the search reloads `memo` after every miss. */
  private growDense(): void {
    const rows = Math.min(this.maxDenseRows, this.denseRows * 2);
    const grown = new Int32Array(rows * this.width);
    grown.set(this.memo);
    this.memo = grown;
    this.denseRows = rows;
  }

  private growIntern(): void {
    const oldSlots = this.internSlots;
    const oldHashes = this.internHashes;
    const slots = new Int32Array(oldSlots.length * 2);
    const hashes = new Int32Array(oldSlots.length * 2);
    const mask = slots.length - 1;
    for (let j = 0; j < oldSlots.length; j++) {
      const id1 = oldSlots[j] as number;
      if (id1 === 0) continue;
      const h = oldHashes[j] as number;
      let i = (h ^ (h >>> 16)) & mask;
      while (slots[i] !== 0) i = (i + 1) & mask;
      slots[i] = id1;
      hashes[i] = h;
    }
    this.internSlots = slots;
    this.internHashes = hashes;
  }

  /** Memo cell for (sid, op), computing it on a miss. */
  resolve(sid: number, op: number): number {
    const c = this.classOf[op] as number;
    if (sid < this.denseRows) {
      const cached = this.memo[sid * this.width + c] as number;
      if (cached !== 0) return cached;
    }
    this.modelCalls++;
    let cell: number;
    if (this.store) {
      cell = this.store.step(sid, c) + 1;
      if (cell === 0) cell = -1;
      else if (cell > this.denseRows && this.denseRows < this.maxDenseRows) this.growDense();
    } else {
      const next = this.model.step(this.states[sid], this.inputs[c], this.outputs[c]);
      cell = next === ILLEGAL ? -1 : this.intern(next) + 1;
    }
    // intern() may have grown the dense table: index it afresh.
    if (sid < this.denseRows) this.memo[sid * this.width + c] = cell;
    return cell;
  }
}
