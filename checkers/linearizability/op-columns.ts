/** One op as the search sees it: model input/output plus its interval in event positions. */
export interface EncodedOp {
  /** The faultline op id (index in the paired history). */
  id: number;
  process: number | 'nemesis';
  /** Position of the invocation event. */
  call: number;
  /** Position of the completion event; Infinity when the outcome is unknown (info or never completed). */
  ret: number;
  input: unknown;
  output: unknown;
  /** Shared by ops with equal input and output (interned, see HistoryPreparer). */
  io?: number;
}

/** What {@link EncodedOps.from} accepts: encoded ops as objects (ids and processes optional). */
export interface OpLike {
  id?: number;
  process?: number | 'nemesis';
  call: number;
  ret: number;
  input: unknown;
  output: unknown;
  io?: number;
}

/** The plain data of an {@link EncodedOps}: survives structured cloning (worker threads). */
export interface EncodedOpsData {
  length: number;
  id: Int32Array;
  process: Float64Array;
  call: Float64Array;
  ret: Float64Array;
  io: Int32Array;
  ioInputs: unknown[];
  ioOutputs: unknown[];
  ownInputs: unknown[] | null;
  ownOutputs: unknown[] | null;
  /** See {@link EncodedOps.bounded}; absent: none. */
  bounded?: Uint8Array | null;
}

const NEMESIS = -1;

/**
 * A partition's encoded ops as columns: typed arrays for the numbers and one shared input/output pair
 * per interned class, so a history of millions of ops costs about 30 bytes per op and nothing the
 * garbage collector has to walk (one object per op cost about 90 bytes, and every major collection
 * traced all of them). Ops whose encoding was not interned keep their own input and output.
 *
 * `at(i)` builds the object form of one op, for reports; the search and the refutations read the
 * columns.
 */
export class EncodedOps {
  readonly length: number;
  readonly id: Int32Array;
  readonly process: Float64Array;
  readonly call: Float64Array;
  readonly ret: Float64Array;
  /** Interned class of each op, -1 for an op with its own input and output. */
  readonly io: Int32Array;
  private readonly ioInputs: unknown[];
  private readonly ioOutputs: unknown[];
  private readonly ownInputs: unknown[] | null;
  private readonly ownOutputs: unknown[] | null;
  /**
   * 1 for an op whose outcome is unknown but which has a return all the same: a bound the model derived
   * from other ops (Model.simplify), not one recorded; set by the preparer (`simplifyPartition`). The
   * search treats it as any return; the shrinker treats the op as what was recorded (outcome unknown).
   * Null when no op has one.
   */
  readonly bounded: Uint8Array | null;

  constructor(d: EncodedOpsData) {
    this.length = d.length;
    this.id = d.id;
    this.process = d.process;
    this.call = d.call;
    this.ret = d.ret;
    this.io = d.io;
    this.ioInputs = d.ioInputs;
    this.ioOutputs = d.ioOutputs;
    this.ownInputs = d.ownInputs;
    this.ownOutputs = d.ownOutputs;
    this.bounded = d.bounded ?? null;
  }

  /** Ops given as objects (tests, callers outside the preparer); an EncodedOps is returned as is. */
  static from(ops: EncodedOps | readonly OpLike[]): EncodedOps {
    if (ops instanceof EncodedOps) return ops;
    // Equal `io` means equal input and output: the first op of each class supplies them.
    const ioInputs: unknown[] = [];
    const ioOutputs: unknown[] = [];
    const classes = new Map<number, number>();
    const b = new EncodedOpsBuilder(ioInputs, ioOutputs, ops.length);
    for (let i = 0; i < ops.length; i++) {
      const o = ops[i] as OpLike;
      if (o.io === undefined) {
        b.pushOwn(o.id ?? i, o.process ?? 0, o.call, o.ret, o.input, o.output);
        continue;
      }
      let c = classes.get(o.io);
      if (c === undefined) {
        c = ioInputs.length;
        classes.set(o.io, c);
        ioInputs.push(o.input);
        ioOutputs.push(o.output);
      }
      b.push(o.id ?? i, o.process ?? 0, o.call, o.ret, c);
    }
    return b.finish(false);
  }

  /** Interned classes the columns may name (`io` values are below this). */
  get classCount(): number {
    return this.ioInputs.length;
  }

  /**
   * Whether an array over {@link classCount} costs no more than a pass over the ops: the classes are
   * shared by every partition of a history, so a partition of a few ops among thousands of classes
   * looks its classes up one by one instead.
   */
  get fewClasses(): boolean {
    return this.ioInputs.length <= 4 * this.length + 64;
  }

  /** Input and output of interned class `c` (every op with `io[i] === c` has them). */
  classInput(c: number): unknown {
    return this.ioInputs[c];
  }

  classOutput(c: number): unknown {
    return this.ioOutputs[c];
  }

  inputOf(i: number): unknown {
    const c = this.io[i] as number;
    return c >= 0 ? this.ioInputs[c] : (this.ownInputs as unknown[])[i];
  }

  outputOf(i: number): unknown {
    const c = this.io[i] as number;
    return c >= 0 ? this.ioOutputs[c] : (this.ownOutputs as unknown[])[i];
  }

  /** The op at `i` as an object (undefined out of range, like an array's `at` for indices ≥ 0). */
  at(i: number): EncodedOp | undefined {
    if (i < 0 || i >= this.length) return undefined;
    const p = this.process[i] as number;
    const c = this.io[i] as number;
    const op: EncodedOp = {
      id: this.id[i] as number,
      process: p === NEMESIS ? 'nemesis' : p,
      call: this.call[i] as number,
      ret: this.ret[i] as number,
      input: this.inputOf(i),
      output: this.outputOf(i),
    };
    if (c >= 0) op.io = c;
    return op;
  }

  toArray(): EncodedOp[] {
    const out: EncodedOp[] = [];
    for (let i = 0; i < this.length; i++) out.push(this.at(i) as EncodedOp);
    return out;
  }

  /** These columns without the ops marked 1 in `out` (in the same order). */
  without(out: Uint8Array): EncodedOps {
    const keep: number[] = [];
    for (let i = 0; i < this.length; i++) if (out[i] !== 1) keep.push(i);
    const pick = <T extends Int32Array | Float64Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(keep.length);
      for (let k = 0; k < keep.length; k++) b[k] = a[keep[k] as number] as number;
      return b;
    };
    const own = (a: unknown[] | null): unknown[] | null => (a === null ? null : keep.map((i) => a[i]));
    return new EncodedOps({
      length: keep.length,
      id: pick(this.id, (n) => new Int32Array(n)),
      process: pick(this.process, (n) => new Float64Array(n)),
      call: pick(this.call, (n) => new Float64Array(n)),
      ret: pick(this.ret, (n) => new Float64Array(n)),
      io: pick(this.io, (n) => new Int32Array(n)),
      ioInputs: this.ioInputs,
      ioOutputs: this.ioOutputs,
      ownInputs: own(this.ownInputs),
      ownOutputs: own(this.ownOutputs),
      bounded: this.bounded === null ? null : pick(this.bounded, (n) => new Uint8Array(n)),
    });
  }

  /**
   * These columns with another return column, where ops without a return (outcome unknown) may have
   * been given one (Model.simplify; the preparer marks them {@link bounded}).
   */
  withReturns(ret: Float64Array): EncodedOps {
    return new EncodedOps({ ...this.data(), ret });
  }

  /** The plain data, for posting to a worker thread (rebuild with `new EncodedOps(data)`). */
  data(): EncodedOpsData {
    return {
      length: this.length,
      id: this.id,
      process: this.process,
      call: this.call,
      ret: this.ret,
      io: this.io,
      ioInputs: this.ioInputs,
      ioOutputs: this.ioOutputs,
      ownInputs: this.ownInputs,
      ownOutputs: this.ownOutputs,
      bounded: this.bounded,
    };
  }
}

/**
 * The positions of `ids[0..n)` in increasing id order (equal ids keep their order). Op ids are distinct
 * integers from 0 to about the op count, so they are placed directly, in linear time (a comparison
 * sort of a million positions cost about 0.1 s); other ids are sorted.
 */
export function orderById(ids: Int32Array, n: number): Int32Array {
  const order = new Int32Array(n);
  let max = -1;
  let direct = true;
  for (let k = 0; k < n && direct; k++) {
    const id = ids[k] as number;
    if (id < 0) direct = false;
    else if (id > max) max = id;
  }
  if (direct && max < 4 * n + 1024) {
    const at = new Int32Array(max + 1); // position + 1 of each id
    for (let k = 0; k < n && direct; k++) {
      const id = ids[k] as number;
      if (at[id] !== 0) direct = false;
      else at[id] = k + 1;
    }
    if (direct) {
      let j = 0;
      for (let id = 0; id <= max; id++) {
        const k = at[id] as number;
        if (k !== 0) order[j++] = k - 1;
      }
      return order;
    }
  }
  for (let k = 0; k < n; k++) order[k] = k;
  order.sort((a, b) => (ids[a] as number) - (ids[b] as number) || a - b);
  return order;
}

/**
 * Appends ops to growable columns. Ops of an interned class name it (`push`); others carry their own
 * input and output (`pushOwn`), whose arrays are only allocated once the first such op comes.
 */
export class EncodedOpsBuilder {
  private n = 0;
  private cap: number;
  private id: Int32Array;
  private process: Float64Array;
  private call: Float64Array;
  private ret: Float64Array;
  private io: Int32Array;
  private ownInputs: unknown[] | null = null;
  private ownOutputs: unknown[] | null = null;

  /** `ioInputs`/`ioOutputs`: the interned classes' encodings, shared with the preparer (it appends). */
  constructor(
    private readonly ioInputs: unknown[],
    private readonly ioOutputs: unknown[],
    capacity = 1024,
  ) {
    this.cap = Math.max(16, capacity);
    this.id = new Int32Array(this.cap);
    this.process = new Float64Array(this.cap);
    this.call = new Float64Array(this.cap);
    this.ret = new Float64Array(this.cap);
    this.io = new Int32Array(this.cap);
  }

  get length(): number {
    return this.n;
  }

  /** The id of the last op pushed (-1 when none). */
  get lastId(): number {
    return this.n === 0 ? -1 : (this.id[this.n - 1] as number);
  }

  push(id: number, process: number | 'nemesis', call: number, ret: number, io: number): void {
    if (this.n === this.cap) this.grow();
    const i = this.n++;
    this.id[i] = id;
    this.process[i] = process === 'nemesis' ? NEMESIS : process;
    this.call[i] = call;
    this.ret[i] = ret;
    this.io[i] = io;
  }

  pushOwn(
    id: number,
    process: number | 'nemesis',
    call: number,
    ret: number,
    input: unknown,
    output: unknown,
  ): void {
    const i = this.n;
    this.push(id, process, call, ret, -1);
    if (this.ownInputs === null || this.ownOutputs === null) {
      this.ownInputs = [];
      this.ownOutputs = [];
    }
    // Holes are interned ops (never read from here).
    this.ownInputs[i] = input;
    this.ownOutputs[i] = output;
  }

  private grow(): void {
    this.cap *= 2;
    const grown = <T extends Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(this.cap);
      b.set(a);
      return b;
    };
    this.id = grown(this.id, (n) => new Int32Array(n));
    this.process = grown(this.process, (n) => new Float64Array(n));
    this.call = grown(this.call, (n) => new Float64Array(n));
    this.ret = grown(this.ret, (n) => new Float64Array(n));
    this.io = grown(this.io, (n) => new Int32Array(n));
  }

  /**
   * The columns trimmed to length; sorted by op id unless `byId` is false (the preparer pushes ops as
   * they complete, in id order but for rare cases).
   */
  finish(byId = true): EncodedOps {
    const n = this.n;
    let order: Int32Array | null = null;
    for (let i = 1; i < n && byId; i++) {
      if ((this.id[i] as number) < (this.id[i - 1] as number)) {
        order = orderById(this.id, n);
        break;
      }
    }
    const take = <T extends Int32Array | Float64Array>(a: T): T => {
      const out = a.slice(0, n) as T;
      if (order !== null) for (let k = 0; k < n; k++) out[k] = a[order[k] as number] as number;
      return out;
    };
    const pick = (a: unknown[] | null): unknown[] | null => {
      if (a === null || order === null) return a;
      const out: unknown[] = new Array(n);
      for (let k = 0; k < n; k++) out[k] = a[order[k] as number];
      return out;
    };
    return new EncodedOps({
      length: n,
      id: take(this.id),
      process: take(this.process),
      call: take(this.call),
      ret: take(this.ret),
      io: take(this.io),
      ioInputs: this.ioInputs,
      ioOutputs: this.ioOutputs,
      ownInputs: pick(this.ownInputs),
      ownOutputs: pick(this.ownOutputs),
    });
  }
}
