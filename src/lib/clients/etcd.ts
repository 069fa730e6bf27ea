import { NOT_APPLIED } from '../../core/history/operation.ts';
import { type Compare, EtcdError, EtcdHttp, type Kv, type RequestOp } from '../databases/etcd-http.ts';
import type { Client, ClientOp, Completion, InvokeContext } from './types.ts';

/**
 * The etcd client for every bundled workload, over the v3 JSON gateway (see ../databases/etcd-http.ts):
 *
 * - register / multi-register: `read` → value (null when unset), `write v`, `cas [old, new]` (txn comparing
 *   the value; a failed compare is a definite `fail`).
 * - set: `add x` and `read` → sorted elements; the set is one key updated by read-modify-write txns guarded
 *   by the key's mod revision (Jepsen's etcd set).
 * - list-append: `txn [[append k v] | [r k null] …]`, read every key, then one txn guarded by every key's
 *   mod revision that writes the appended lists; reads are filled in from the same snapshot.
 * - counter: `add d` (guarded read-modify-write), `read` → number.
 * - bank: `transfer {from, to, amount}` (guarded, refuses to overdraw: definite fail), `read` → balances,
 *   all accounts read in one txn.
 *
 * Guarded updates retry a bounded number of times when another client won the race; when the retries
 * run out the op fails (the guard guarantees nothing was written).
 *
 * Reads are linearizable by default; `serializableReads` makes them serializable (served from the local
 * member, possibly stale: the known-unsafe configuration a linearizability checker must catch).
 */
export interface EtcdClientOptions {
  workload: string;
  /** node name → client URL (http://addr:2379). */
  urls: Record<string, string>;
  serializableReads?: boolean;
  /** Key prefix, so workloads never collide. */
  prefix?: string;
  /** Accounts and starting balance for bank (account 0 holds the total initially). */
  accounts?: readonly string[];
  totalBalance?: number;
  maxRetries?: number;
}

const IDEMPOTENT = new Set(['read']);

export class EtcdClient implements Client {
  private http: EtcdHttp | undefined;
  private node = '';
  /** Requests sent by this factory and every client it opened (shared with them). */
  private sent = { requests: 0 };
  constructor(private readonly o: EtcdClientOptions) {}

  async open(node: string): Promise<Client> {
    const url = this.o.urls[node];
    if (!url) throw new Error(`no etcd client URL for node ${node}`);
    const c = new EtcdClient(this.o);
    c.sent = this.sent;
    c.http = new EtcdHttp(url, this.sent);
    c.node = node;
    return c;
  }

  private get h(): EtcdHttp {
    if (!this.http) throw new Error('etcd client used before open()');
    return this.http;
  }

  private k(key: string): string {
    return `${this.o.prefix ?? `/faultline/${this.o.workload}`}/${key}`;
  }

  /** Bank accounts start with the whole balance in the first account. */
  async setup(): Promise<void> {
    if (this.o.workload !== 'bank') return;
    const accounts = this.o.accounts ?? [];
    const puts: RequestOp[] = accounts.map((a, i) => ({
      put: { key: this.k(`account-${a}`), value: String(i === 0 ? (this.o.totalBalance ?? 100) : 0) },
    }));
    // Only the first setup wins: the guard (first account never written) makes setup idempotent per run.
    await this.h.txn([{ key: this.k(`account-${accounts[0]}`), target: 'VERSION', version: 0 }], puts);
  }

  /**
   * Register ops send exactly one request each (read: range, write: put, cas: txn); the other
   * workloads read, then write under a guard, retrying on conflict, so their count per op varies.
   */
  wire(): { requests: number; perOp: number | null; what: string } {
    const one = this.o.workload === 'register' || this.o.workload === 'multi-register';
    return {
      requests: this.sent.requests,
      perOp: one ? 1 : null,
      what: 'HTTP requests etcd-http handed to fetch (/v3/kv/range, put, txn)',
    };
  }

  async teardown(): Promise<void> {}
  async close(): Promise<void> {}

  async invoke(op: ClientOp, ctx: InvokeContext): Promise<Completion> {
    try {
      return await this.dispatch(op, ctx.signal);
    } catch (err) {
      return classify(op, err);
    }
  }

  private dispatch(op: ClientOp, signal: AbortSignal): Promise<Completion> {
    switch (this.o.workload) {
      case 'register':
      case 'multi-register':
        return this.register(op, signal);
      case 'set':
        return this.set(op, signal);
      case 'list-append':
        return this.listAppend(op, signal);
      case 'counter':
        return this.counter(op, signal);
      case 'bank':
        return this.bank(op, signal);
      default:
        throw new Error(`etcd client: unknown workload ${this.o.workload}`);
    }
  }

  private read(key: string, signal: AbortSignal): Promise<{ kv: Kv | null; revision: number }> {
    return this.h.get(key, { serializable: this.o.serializableReads === true, signal });
  }

  private async register(op: ClientOp, signal: AbortSignal): Promise<Completion> {
    const key = this.k(op.key ?? 'r');
    if (op.f === 'read') {
      const { kv } = await this.read(key, signal);
      return { type: 'ok', value: kv ? JSON.parse(kv.value) : null };
    }
    if (op.f === 'write') {
      await this.h.put(key, JSON.stringify(op.value), signal);
      return { type: 'ok' };
    }
    if (op.f === 'cas') {
      const [from, to] = op.value as [unknown, unknown];
      const r = await this.h.txn(
        [{ key, target: 'VALUE', value: JSON.stringify(from) }],
        [{ put: { key, value: JSON.stringify(to) } }],
        [],
        signal,
      );
      return r.succeeded ? { type: 'ok' } : { type: 'fail', error: 'cas-mismatch' };
    }
    throw new Error(`register: unknown f ${op.f}`);
  }

  /** Read-modify-write of one JSON key, guarded by its mod revision, retried when someone else won. */
  private async guardedUpdate<T>(
    key: string,
    signal: AbortSignal,
    update: (current: T | null) => T | { refuse: string },
  ): Promise<Completion> {
    const retries = this.o.maxRetries ?? 20;
    for (let i = 0; i <= retries; i++) {
      const { kv } = await this.h.get(key, { signal });
      const current = kv ? (JSON.parse(kv.value) as T) : null;
      const next = update(current);
      if (next && typeof next === 'object' && 'refuse' in next) return { type: 'fail', error: next.refuse };
      const r = await this.h.txn(
        [{ key, target: 'MOD', modRevision: kv?.modRevision ?? 0 }],
        [{ put: { key, value: JSON.stringify(next) } }],
        [],
        signal,
      );
      if (r.succeeded) return { type: 'ok' };
    }
    return { type: 'fail', error: 'contention: guard failed on every retry' };
  }

  private async set(op: ClientOp, signal: AbortSignal): Promise<Completion> {
    const key = this.k('set');
    if (op.f === 'read') {
      const { kv } = await this.read(key, signal);
      const items = kv ? (JSON.parse(kv.value) as number[]) : [];
      return { type: 'ok', value: items.slice().sort((a, b) => a - b) };
    }
    if (op.f === 'add')
      return this.guardedUpdate<number[]>(key, signal, (cur) => [...(cur ?? []), op.value as number]);
    throw new Error(`set: unknown f ${op.f}`);
  }

  private async counter(op: ClientOp, signal: AbortSignal): Promise<Completion> {
    const key = this.k('counter');
    if (op.f === 'read') {
      const { kv } = await this.read(key, signal);
      return { type: 'ok', value: kv ? Number(JSON.parse(kv.value)) : 0 };
    }
    if (op.f === 'add')
      return this.guardedUpdate<number>(key, signal, (cur) => (cur ?? 0) + Number(op.value));
    throw new Error(`counter: unknown f ${op.f}`);
  }

  private async listAppend(op: ClientOp, signal: AbortSignal): Promise<Completion> {
    if (op.f !== 'txn') throw new Error(`list-append: unknown f ${op.f}`);
    const mops = op.value as [string, unknown, unknown][];
    const keys = [...new Set(mops.map((m) => String(m[1])))];
    const writes = mops.some((m) => m[0] === 'append');
    const retries = this.o.maxRetries ?? 20;
    for (let attempt = 0; attempt <= retries; attempt++) {
      // One txn reads every key: a consistent snapshot at one revision.
      const snap = await this.h.txn(
        [],
        keys.map((k) => ({
          range: { key: this.k(k), serializable: !writes && this.o.serializableReads === true },
        })),
        [],
        signal,
      );
      const state = new Map<string, { list: unknown[]; mod: number }>();
      keys.forEach((k, i) => {
        const kv = snap.responses[i]?.[0];
        state.set(k, { list: kv ? (JSON.parse(kv.value) as unknown[]) : [], mod: kv?.modRevision ?? 0 });
      });
      const lists = new Map([...state].map(([k, s]) => [k, s.list.slice()]));
      const out = mops.map(([f, k, v]) => {
        const list = lists.get(String(k)) as unknown[];
        if (f === 'r') return [f, k, list.slice()];
        list.push(v);
        return [f, k, v];
      });
      if (!writes) return { type: 'ok', value: out };
      const written = keys.filter((k) => mops.some((m) => m[0] === 'append' && String(m[1]) === k));
      const guards: Compare[] = keys.map((k) => ({
        key: this.k(k),
        target: 'MOD',
        modRevision: state.get(k)?.mod ?? 0,
      }));
      const r = await this.h.txn(
        guards,
        written.map((k) => ({ put: { key: this.k(k), value: JSON.stringify(lists.get(k)) } })),
        [],
        signal,
      );
      if (r.succeeded) return { type: 'ok', value: out };
    }
    return { type: 'fail', error: 'contention: guard failed on every retry' };
  }

  private async bank(op: ClientOp, signal: AbortSignal): Promise<Completion> {
    const accounts = this.o.accounts ?? [];
    const key = (a: string) => this.k(`account-${a}`);
    if (op.f === 'read') {
      const snap = await this.h.txn(
        [],
        accounts.map((a) => ({ range: { key: key(a), serializable: this.o.serializableReads === true } })),
        [],
        signal,
      );
      const balances: Record<string, number | null> = {};
      accounts.forEach((a, i) => {
        const kv = snap.responses[i]?.[0];
        balances[a] = kv ? Number(kv.value) : null;
      });
      return { type: 'ok', value: balances };
    }
    if (op.f === 'transfer') {
      const { from, to, amount } = op.value as { from: string; to: string; amount: number };
      const retries = this.o.maxRetries ?? 20;
      for (let i = 0; i <= retries; i++) {
        const snap = await this.h.txn(
          [],
          [{ range: { key: key(from) } }, { range: { key: key(to) } }],
          [],
          signal,
        );
        const a = snap.responses[0]?.[0];
        const b = snap.responses[1]?.[0];
        if (!a || !b) return { type: 'fail', error: 'no-such-account' };
        const fromBal = Number(a.value) - amount;
        if (fromBal < 0) return { type: 'fail', error: 'insufficient-funds' };
        const r = await this.h.txn(
          [
            { key: key(from), target: 'MOD', modRevision: a.modRevision },
            { key: key(to), target: 'MOD', modRevision: b.modRevision },
          ],
          [
            { put: { key: key(from), value: String(fromBal) } },
            { put: { key: key(to), value: String(Number(b.value) + amount) } },
          ],
          [],
          signal,
        );
        if (r.succeeded) return { type: 'ok' };
      }
      return { type: 'fail', error: 'contention: guard failed on every retry' };
    }
    throw new Error(`bank: unknown f ${op.f}`);
  }

  toString(): string {
    return `etcd client → ${this.node}`;
  }
}

/**
 * Turns an exception into a completion. Definite failures: nothing reached the server (connection
 * refused, or the gateway of a member shutting down refused it before sending: see
 * gatewayClosedBeforeSending), or the server said it did not apply the request (no leader, too many requests). Reads are
 * idempotent, so an unanswered read is a fail too. Anything else may or may not have happened: info.
 * A cas is `fail` only when its compare ran and did not match (see register()).
 */
export function classify(op: ClientOp, err: unknown): Completion {
  const msg = errorText(err);
  const code = causeCode(err);
  const definite =
    code === 'ECONNREFUSED' ||
    code === 'EHOSTUNREACH' ||
    gatewayClosedBeforeSending(err) ||
    (err instanceof EtcdError && /no leader|too many requests|not capable|key not found/i.test(err.message));
  if (IDEMPOTENT.has(op.f) || isReadOnlyTxn(op)) return { type: 'fail', error: msg };
  // A plain failed cas is read by the cas-register model as "compared and saw another value"; one that
  // never reached a compare observed nothing and is marked not-applied, so checkers drop it (recording it
  // as info instead would leave it open forever and make the linearizability search explode).
  if (definite) return { type: 'fail', error: `${NOT_APPLIED}: ${msg}` };
  return { type: 'info', error: `indeterminate: ${msg}` };
}

/** grpc-go's `ErrClientConnClosing`: `status.Error(codes.Canceled, "grpc: the client connection is closing")`. */
const CLIENT_CONN_CLOSING = 'grpc: the client connection is closing';
const GRPC_CANCELED = 1;

/**
 * A member that is shutting down (SIGTERM: embed.Etcd.Close cancels the serve context, whose goroutine in
 * embed/serve.go registerGateway closes the gateway's grpc.ClientConn to its own member, then waits for
 * the leadership hand-off) answers gateway requests on open HTTP connections with this error. It is
 * provably a refusal before anything reached the member's gRPC server, so nothing was proposed:
 * in grpc-go 1.33.3 (Debian's etcd 3.4.23 is built with it; upstream 3.4's go.mod has 1.26.0, same code
 * paths) a unary call (ClientConn.Invoke → newClientStream) gets `ErrClientConnClosing` only from
 * `waitForResolvedAddrs` or from `pickerWrapper.pick` in `newAttemptLocked`, both before a stream is
 * written; pick runs again only for a transparent retry of an attempt the server did not process
 * (`shouldRetry`: no stream, or `Unprocessed()` after GOAWAY / REFUSED_STREAM; other retries are off
 * without GRPC_GO_RETRY=on). The one place that ends an open stream with it (stream.go, the cc.ctx
 * watcher) is for streaming RPCs only (`desc != unaryStreamDesc`); a unary RPC in flight when the
 * ClientConn closes ends with the transport's `transport is closing` (codes.Unavailable, HTTP 503),
 * which stays indeterminate. grpc-gateway 1.6.4's DefaultHTTPError puts the status's message and code
 * in the body (`{"error": …, "message": …, "code": 1}`, HTTP 408), so both are matched.
 */
function gatewayClosedBeforeSending(err: unknown): boolean {
  return (
    err instanceof EtcdError &&
    err.grpcCode === GRPC_CANCELED &&
    err.message.endsWith(`: ${CLIENT_CONN_CLOSING}`)
  );
}

function isReadOnlyTxn(op: ClientOp): boolean {
  return op.f === 'txn' && Array.isArray(op.value) && (op.value as unknown[][]).every((m) => m[0] === 'r');
}

function causeCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = causeCode(err);
  if (err.name === 'AbortError' || err.name === 'TimeoutError') return 'timeout';
  return code ? `${err.message} (${code})` : err.message;
}
