import { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  type Client,
  type ClientContext,
  type ClientOp,
  type Completion,
  defineClient,
  defineDaemonDatabase,
  definePlugin,
  type InvokeContext,
  NOT_APPLIED,
} from 'faultline';

/**
 * memcached under faultline, through the public API only: the database is a daemon description
 * (memcached.yaml), the client below speaks memcached's text protocol over TCP for two workloads:
 * register (read, write, compare-and-set on one key: get, set, gets + cas) and set (add an element:
 * append to one key, creating it with add; read: get, split on commas).
 *
 * clientOptions.route: `first-node` (default) sends every client to the first node's server, a single
 * server and so linearizable; `own-node` sends each client to the server of the node it is bound to.
 * memcached servers do not replicate, so `own-node` reads miss other nodes' writes (a negative control).
 */
type Route = 'first-node' | 'own-node';

const options = {
  safeParse(v: unknown) {
    const o = (v ?? {}) as Record<string, unknown>;
    const extra = Object.keys(o).filter((k) => k !== 'route');
    if (extra.length > 0)
      return {
        success: false as const,
        error: { issues: [{ path: [extra[0] as string], message: 'unknown option' }] },
      };
    if (o.route !== undefined && o.route !== 'first-node' && o.route !== 'own-node')
      return {
        success: false as const,
        error: { issues: [{ path: ['route'], message: 'first-node or own-node' }] },
      };
    return { success: true as const, data: { route: (o.route ?? 'first-node') as Route } };
  },
};

/** One TCP connection to one memcached server; requests go one at a time (a client is one process). */
class Connection {
  private buffer = '';
  private waiting: { done: (line: string | Error) => void; lines: number; until: RegExp } | null = null;
  private collected: string[] = [];
  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('connection closed')));
  }

  static open(host: string, port: number, signal: AbortSignal): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = new Socket();
      const onAbort = () => socket.destroy(new Error('timeout'));
      signal.addEventListener('abort', onAbort, { once: true });
      socket.once('error', reject);
      socket.connect(port, host, () => {
        signal.removeEventListener('abort', onAbort);
        socket.off('error', reject);
        resolve(new Connection(socket));
      });
    });
  }

  /** Send a request and collect reply lines until one matches `until` (END, STORED, EXISTS …). */
  request(text: string, until: RegExp, signal: AbortSignal): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const onAbort = () => this.socket.destroy(new Error('timeout'));
      signal.addEventListener('abort', onAbort, { once: true });
      this.collected = [];
      this.waiting = {
        lines: 0,
        until,
        done: (r) => {
          signal.removeEventListener('abort', onAbort);
          if (r instanceof Error) reject(r);
          else resolve(this.collected);
        },
      };
      this.socket.write(text);
    });
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    for (let i = this.buffer.indexOf('\r\n'); i >= 0; i = this.buffer.indexOf('\r\n')) {
      const line = this.buffer.slice(0, i);
      this.buffer = this.buffer.slice(i + 2);
      const w = this.waiting;
      if (!w) continue;
      this.collected.push(line);
      if (w.until.test(line) || /^(ERROR|CLIENT_ERROR|SERVER_ERROR)/.test(line)) {
        this.waiting = null;
        w.done(line);
      }
    }
  }

  private fail(err: Error): void {
    const w = this.waiting;
    this.waiting = null;
    w?.done(err);
  }

  close(): void {
    this.socket.destroy();
  }
}

class MemcachedClient implements Client {
  private conn: Connection | null = null;
  constructor(
    private readonly c: ClientContext,
    private readonly address: string | null = null,
  ) {}

  async open(node: string): Promise<Client> {
    const route = (this.c.options.route ?? 'first-node') as Route;
    const target = route === 'own-node' ? node : (this.c.ctx.nodes[0] as string);
    return new MemcachedClient(this.c, this.c.db.clientAddress(this.c.ctx, target));
  }

  async setup(): Promise<void> {}
  async teardown(): Promise<void> {}
  async close(): Promise<void> {
    this.conn?.close();
    this.conn = null;
  }

  private async connection(signal: AbortSignal): Promise<Connection> {
    if (this.conn) return this.conn;
    const [host, port] = (this.address as string).split(':') as [string, string];
    this.conn = await Connection.open(host, Number(port), signal);
    return this.conn;
  }

  async invoke(op: ClientOp, ctx: InvokeContext): Promise<Completion> {
    let sent = false;
    try {
      const conn = await this.connection(ctx.signal);
      sent = true;
      const key = op.key ?? (this.c.workload === 'set' ? 's' : 'r');
      if (op.f === 'read') {
        const got = await conn.request(`get ${key}\r\n`, /^END$/, ctx.signal);
        return { type: 'ok', value: this.c.workload === 'set' ? elementsOf(got) : registerValue(got) };
      }
      if (op.f === 'write') {
        const data = String(op.value);
        const r = await conn.request(`set ${key} 0 0 ${data.length}\r\n${data}\r\n`, /^STORED$/, ctx.signal);
        return r.at(-1) === 'STORED' ? { type: 'ok' } : { type: 'info', error: r.at(-1) };
      }
      if (op.f === 'cas') return await this.cas(conn, key, op.value as [number, number], ctx.signal);
      if (op.f === 'add') return await this.add(conn, String(op.value), ctx.signal);
      return { type: 'fail', error: `${NOT_APPLIED}: unknown op ${op.f}` };
    } catch (err) {
      this.conn?.close();
      this.conn = null;
      // Never sent (the connection could not be opened): it did not happen. Sent, then no answer: a
      // read changed nothing, a write may or may not have happened.
      if (!sent) return { type: 'fail', error: `${NOT_APPLIED}: ${(err as Error).message}` };
      return { type: op.f === 'read' ? 'fail' : 'info', error: (err as Error).message };
    }
  }

  /** Compare-and-set on the value: gets (value and cas token), then cas with that token. */
  private async cas(
    conn: Connection,
    key: string,
    [from, to]: [number, number],
    signal: AbortSignal,
  ): Promise<Completion> {
    const got = await conn.request(`gets ${key}\r\n`, /^END$/, signal);
    const current = registerValue(got);
    // The compare saw another value: a definite, observed failure.
    if (current !== from) return { type: 'fail', error: `cas: value is ${current}` };
    const token = /^VALUE \S+ \d+ \d+ (\d+)$/.exec(got[0] ?? '')?.[1];
    const data = String(to);
    const r = await conn.request(
      `cas ${key} 0 0 ${data.length} ${token}\r\n${data}\r\n`,
      /^(STORED|EXISTS|NOT_FOUND)$/,
      signal,
    );
    if (r.at(-1) === 'STORED') return { type: 'ok' };
    // Someone wrote between gets and cas: nothing was written, and the compare result is unknown.
    if (r.at(-1) === 'EXISTS' || r.at(-1) === 'NOT_FOUND')
      return { type: 'fail', error: `${NOT_APPLIED}: cas ${r.at(-1)}` };
    return { type: 'info', error: r.at(-1) };
  }

  /** Add an element to the set: append `,x` to the key, or create it with `add` when it is missing. */
  private async add(conn: Connection, x: string, signal: AbortSignal): Promise<Completion> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const more = `,${x}`;
      const appended = await conn.request(
        `append s 0 0 ${more.length}\r\n${more}\r\n`,
        /^(STORED|NOT_STORED)$/,
        signal,
      );
      if (appended.at(-1) === 'STORED') return { type: 'ok' };
      // No key yet: create it; if another client just did, append again.
      const created = await conn.request(
        `add s 0 0 ${x.length}\r\n${x}\r\n`,
        /^(STORED|NOT_STORED)$/,
        signal,
      );
      if (created.at(-1) === 'STORED') return { type: 'ok' };
    }
    return { type: 'fail', error: `${NOT_APPLIED}: the set key kept appearing and disappearing` };
  }
}

/** The set's elements, sorted; an absent key is the empty set. */
function elementsOf(lines: readonly string[]): number[] {
  if (lines[0] === 'END') return [];
  return (lines[1] ?? '')
    .split(',')
    .filter((e) => e !== '')
    .map(Number)
    .sort((a, b) => a - b);
}

/** `VALUE k flags bytes [cas]`, the data line, `END` → the integer stored, or null when absent. */
function registerValue(lines: readonly string[]): number | null {
  if (lines[0] === 'END') return null;
  if (!/^VALUE /.test(lines[0] ?? '')) throw new Error(`unexpected reply: ${lines.join(' | ')}`);
  return Number(lines[1]);
}

export default definePlugin({
  name: 'memcached',
  databases: [defineDaemonDatabase(fileURLToPath(new URL('./memcached.yaml', import.meta.url)))],
  clients: [
    defineClient({
      name: 'memcached-text',
      summary: 'memcached text protocol over TCP: register (get, set, gets + cas), set (append / add, get)',
      workloads: ['register', 'set'],
      hiddenRetries: false,
      endpoints: 'client-address',
      options,
      create: (c) => new MemcachedClient(c),
    }),
  ],
});
