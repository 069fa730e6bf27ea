import {
  type Client,
  type ClientContext,
  type ClientOp,
  type Completion,
  type InvokeContext,
  NOT_APPLIED,
} from 'faultline';
import type { OptionsSchema } from 'faultline/checkers';
import { refused, unknownOption } from './db-options.ts';

/**
 * Elle's transactions over SQL, for any driver: one op is one transaction of micro-ops
 * (`['r', k, null]`, `['append', k, v]`, `['w', k, v]`), run between BEGIN and COMMIT at the isolation
 * level the plan asks for. list-append keeps each key as a row holding a comma-separated list (append
 * is an upsert concatenating to it, in the same transaction as the reads); rw-register keeps each key as
 * a row holding an integer. The set workload (durability plans) is one transaction per op too: `add`
 * inserts its integer as a row of one table, `read` selects every row.
 *
 * Outcomes, the history's contract:
 *   - ok: COMMIT returned;
 *   - fail (not applied): the server refused a statement or the COMMIT (serialization failure,
 *     deadlock, write conflict, lock timeout: the transaction is rolled back), or the connection was
 *     lost before COMMIT was sent (an open transaction dies with its connection);
 *   - info: the connection was lost, or the op timed out, while COMMIT was in flight;
 *   - a read-only transaction that did not finish is a fail (it changed nothing).
 */
export type Isolation = 'serializable' | 'repeatable-read' | 'read-committed' | 'read-uncommitted';
export type ReadFrom = 'primary' | 'replicas';
export type ConnectTo = 'first-node' | 'own-node';

export interface TxnOptions {
  isolation: Isolation;
  readFrom: ReadFrom;
  /** Where transactions go: the first node (the primary), or the worker's own node (Galera: every node a primary). */
  connectTo: ConnectTo;
  /** MariaDB only: the session's innodb_snapshot_isolation (write-write conflict detection at REPEATABLE READ). */
  snapshotIsolation: boolean | null;
}

export const ISOLATION_SQL: Record<Isolation, string> = {
  serializable: 'SERIALIZABLE',
  'repeatable-read': 'REPEATABLE READ',
  'read-committed': 'READ COMMITTED',
  'read-uncommitted': 'READ UNCOMMITTED',
};

/** The clientOptions schema: isolation (required), readFrom, snapshotIsolation; unknown keys are refused. */
export function txnOptionsSchema(allowed: {
  isolation: readonly Isolation[];
  readFrom: readonly ReadFrom[];
  connectTo: readonly ConnectTo[];
  snapshotIsolation: boolean;
}): OptionsSchema {
  return {
    safeParse(v: unknown) {
      const o = (v ?? {}) as Record<string, unknown>;
      const known = [
        'isolation',
        'readFrom',
        'connectTo',
        ...(allowed.snapshotIsolation ? ['snapshotIsolation'] : []),
      ];
      const unknown = unknownOption(o, known);
      if (unknown) return unknown;
      const isolation = o.isolation ?? 'serializable';
      if (!allowed.isolation.includes(isolation as Isolation))
        return refused('isolation', `one of ${allowed.isolation.join(', ')}`);
      const readFrom = o.readFrom ?? 'primary';
      if (!allowed.readFrom.includes(readFrom as ReadFrom))
        return refused('readFrom', `one of ${allowed.readFrom.join(', ')}`);
      const connectTo = o.connectTo ?? 'first-node';
      if (!allowed.connectTo.includes(connectTo as ConnectTo))
        return refused('connectTo', `one of ${allowed.connectTo.join(', ')}`);
      if (o.snapshotIsolation !== undefined && typeof o.snapshotIsolation !== 'boolean')
        return refused('snapshotIsolation', 'true or false');
      const data: TxnOptions = {
        isolation: isolation as Isolation,
        readFrom: readFrom as ReadFrom,
        connectTo: connectTo as ConnectTo,
        snapshotIsolation: (o.snapshotIsolation as boolean | undefined) ?? null,
      };
      return { success: true as const, data };
    },
  };
}

export type Mop = [string, number, unknown];

/** One connection to one server, as a driver offers it. */
export interface SqlSession {
  begin(): Promise<void>;
  readList(k: number): Promise<number[]>;
  append(k: number, v: number): Promise<void>;
  readRegister(k: number): Promise<number | null>;
  write(k: number, v: number): Promise<void>;
  /** The set workload: one row per added integer. */
  addToSet(v: number): Promise<void>;
  readSet(): Promise<number[]>;
  commit(): Promise<void>;
  /**
   * The server's own view of the open transaction (PostgreSQL: backend pid, xid, snapshot), taken just
   * before COMMIT and kept on the ok completion as `extras.txn`, so a reported cycle can be checked
   * against the server's snapshots (examples/sql/pg-cycle-snapshots.ts).
   */
  trace?(): Promise<Record<string, unknown>>;
  /** Best effort; errors are ignored (the transaction is dead either way). */
  rollback(): Promise<void>;
  /** Drop the connection at once (a timed-out op). */
  destroy(): void;
}

/** What a driver tells about one error. */
export interface ErrorKind {
  /** The server answered with an error: the statement (and with it the transaction) did not apply. */
  refusedByServer: boolean;
  /** The connection is gone. */
  connectionLost: boolean;
}

export interface SqlDriver {
  /** Open a session to `address` (host:port) at the given options; throws when the server cannot be reached. */
  connect(address: string, o: TxnOptions, signal: AbortSignal): Promise<SqlSession>;
  /** Create the tables (idempotent, safe to race with another client doing the same). */
  createTables(session: SqlSession): Promise<void>;
  classify(err: unknown): ErrorKind;
}

export class TxnClient implements Client {
  private readonly sessions = new Map<string, SqlSession>();
  constructor(
    private readonly c: ClientContext,
    private readonly driver: SqlDriver,
    private readonly node: string | null = null,
  ) {}

  async open(node: string): Promise<Client> {
    return new TxnClient(this.c, this.driver, node);
  }

  private get options(): TxnOptions {
    return this.c.options as unknown as TxnOptions;
  }

  private primary(): string {
    return this.c.ctx.nodes[0] as string;
  }

  /** Where a transaction goes: the primary, or this worker's own node (connectTo own-node; read-only with readFrom replicas). */
  private target(readOnly: boolean): string {
    if (this.options.connectTo === 'own-node') return this.node as string;
    if (readOnly && this.options.readFrom === 'replicas') return this.node as string;
    return this.primary();
  }

  private async session(node: string, signal: AbortSignal): Promise<SqlSession> {
    const open = this.sessions.get(node);
    if (open) return open;
    const s = await this.driver.connect(this.c.db.clientAddress(this.c.ctx, node), this.onNode(node), signal);
    this.sessions.set(node, s);
    return s;
  }

  /**
   * The options for a session on `node`. Read-only transactions on a PostgreSQL hot standby can run at
   * most at REPEATABLE READ (a snapshot of the replayed state): asked for SERIALIZABLE, they get that.
   */
  private onNode(node: string): TxnOptions {
    const o = this.options;
    if (o.readFrom === 'replicas' && node !== this.primary() && o.isolation === 'serializable')
      return { ...o, isolation: 'repeatable-read' };
    return o;
  }

  private drop(node: string): void {
    this.sessions.get(node)?.destroy();
    this.sessions.delete(node);
  }

  async setup(): Promise<void> {
    if (this.node !== this.primary()) return;
    const s = await this.session(this.primary(), AbortSignal.timeout(60_000));
    await this.driver.createTables(s);
  }

  async teardown(): Promise<void> {}

  async close(): Promise<void> {
    for (const node of [...this.sessions.keys()]) this.drop(node);
  }

  async invoke(op: ClientOp, ctx: InvokeContext): Promise<Completion> {
    const body = this.body(op);
    if (typeof body === 'string') return { type: 'fail', error: `${NOT_APPLIED}: ${body}` };
    const { readOnly } = body;
    const node = this.target(readOnly);
    let s: SqlSession;
    try {
      s = await this.session(node, ctx.signal);
    } catch (err) {
      this.drop(node);
      return { type: 'fail', error: `${NOT_APPLIED}: connect: ${message(err)}`, node };
    }
    const onAbort = () => this.drop(node);
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    let committing = false;
    try {
      await s.begin();
      const out = await body.run(s);
      const txn = body.traced ? await s.trace?.() : undefined;
      committing = true;
      await s.commit();
      return { type: 'ok', value: out, node, ...(txn ? { extras: { txn } } : {}) };
    } catch (err) {
      const kind = this.driver.classify(err);
      if (kind.connectionLost || ctx.signal.aborted) {
        this.drop(node);
        // The transaction dies with its connection unless COMMIT had already been sent.
        if (committing && !readOnly)
          return { type: 'info', error: `commit outcome unknown: ${message(err)}`, node };
        return {
          type: 'fail',
          error: `${NOT_APPLIED}: connection lost before commit: ${message(err)}`,
          node,
        };
      }
      await s.rollback();
      if (kind.refusedByServer) return { type: 'fail', error: `${NOT_APPLIED}: ${message(err)}`, node };
      // Neither the server's refusal nor a lost connection: the client library broke mid-way.
      this.drop(node);
      return { type: committing && !readOnly ? 'info' : 'fail', error: message(err), node };
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * What one op runs inside its transaction, and whether it only reads; a string when the op is not
   * one of the workload's. A transaction of micro-ops is traced (its server-side view kept for cycles).
   */
  private body(
    op: ClientOp,
  ): { readOnly: boolean; traced: boolean; run(s: SqlSession): Promise<unknown> } | string {
    if (this.c.workload === 'set') {
      const v = op.value;
      if (op.f === 'add' && Number.isSafeInteger(v))
        return { readOnly: false, traced: false, run: (s) => s.addToSet(v as number).then(() => v) };
      if (op.f === 'read') return { readOnly: true, traced: false, run: (s) => s.readSet() };
      return `unknown op ${op.f} with value ${JSON.stringify(v)} (set: add of an integer, read)`;
    }
    if (op.f !== 'txn') return `unknown op ${op.f}`;
    const mops = op.value as Mop[];
    return {
      readOnly: mops.every((m) => m[0] === 'r'),
      traced: true,
      run: async (s) => {
        const out: Mop[] = [];
        for (const [f, k, v] of mops) out.push([f, k, await this.mop(s, f, k, v)]);
        return out;
      },
    };
  }

  private async mop(s: SqlSession, f: string, k: number, v: unknown): Promise<unknown> {
    if (this.c.workload === 'list-append') {
      if (f === 'r') return s.readList(k);
      if (f === 'append') return s.append(k, v as number).then(() => v);
    } else {
      if (f === 'r') return s.readRegister(k);
      if (f === 'w') return s.write(k, v as number).then(() => v);
    }
    throw new Error(`${this.c.workload}: unknown micro-op ${f}`);
  }
}

/** A list stored as "1,2,3" (absent or empty: []). */
export function parseList(text: unknown): number[] {
  if (text === null || text === undefined || text === '') return [];
  return String(text).split(',').map(Number);
}

export function message(err: unknown): string {
  const e = err as { message?: string; code?: string };
  return `${e.code ? `${e.code} ` : ''}${e.message ?? String(err)}`.split('\n')[0] as string;
}
