import { readFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  type Client,
  type ClientContext,
  type ClientOp,
  type Completion,
  type Database,
  type DbContext,
  defineClient,
  defineDaemonDatabase,
  defineDatabase,
  definePlugin,
  type InvokeContext,
  NOT_APPLIED,
} from 'faultline';
import zookeeper from 'node-zookeeper-client';
import ConnectionManager from 'node-zookeeper-client/lib/ConnectionManager.js';
import jute from 'node-zookeeper-client/lib/jute/index.js';
import { parse as parseYaml } from 'yaml';

/**
 * ZooKeeper under faultline, through the public API only. The database is Debian's zookeeperd (3.8): a
 * daemon description (zookeeper.yaml: zoo.cfg and myid per node, a 3-node ensemble, one server per
 * node), ready here once the ensemble has one leader. ZooKeeper orders every write through the leader, but a read is answered by the server the
 * session is connected to from its own state: a server cut off from the quorum (or behind it) answers
 * stale reads until it notices. `sync()` before a read makes the server catch up with the leader first.
 *
 * Client `zookeeper` (node-zookeeper-client, a pure-JavaScript client: no native build on the nodes or
 * the control node), workloads `register` (read / write / cas on one key) and `multi-register` (the
 * same ops on independent keys, one znode each): read is getData, write is setData (create when
 * missing), cas is getData then setData with the version read (a version mismatch is a definite failure). clientOptions.sync: true sends ZooKeeper's sync request before every read, the cas's read included.
 * Each client's sessions are bound to its own node's server.
 *
 * ZooKeeper's own view (the `srvr` four-letter word: Mode leader/follower, Zxid) gives the database's
 * primaries and is what `zkView` prints.
 */
const CLIENT_PORT = 2181;
const ROOT = '/faultline';

const description = parseYaml(
  readFileSync(fileURLToPath(new URL('./zookeeper.yaml', import.meta.url)), 'utf8'),
) as { config: { path: string; content: string }[] } & Record<string, unknown>;

/**
 * The daemon with `dbOptions.forceSync` (default true): false writes `forceSync=no` into zoo.cfg, which
 * ZooKeeper reads as the system property `zookeeper.forceSync` — the transaction log is written but not
 * fsynced before a write is acknowledged (the ZooKeeper Administrator's Guide calls it unsafe).
 */
function daemonFor(forceSync: boolean) {
  if (forceSync) return defineDaemonDatabase(description);
  const config = description.config.map((f) =>
    f.path === 'zoo.cfg' ? { ...f, content: `${f.content.trimEnd()}\nforceSync=no\n` } : f,
  );
  return defineDaemonDatabase({ ...description, config });
}

function address(ctx: DbContext, node: string): string {
  const spec = ctx.remote.node(node);
  return spec.labels?.privateAddress ?? spec.host;
}

/** One four-letter word (srvr, mntr, stat …) to one server: its reply text. */
export function fourLetterWord(host: string, word: string, timeoutMs = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = new Socket();
    let out = '';
    s.setTimeout(timeoutMs, () => s.destroy(new Error(`${word}: no answer from ${host} in ${timeoutMs} ms`)));
    s.on('data', (d) => {
      out += d.toString();
    });
    s.on('error', reject);
    s.on('close', () => resolve(out));
    s.connect(CLIENT_PORT, host, () => s.write(word));
  });
}

/** `Mode: leader` and `Zxid: 0x…` from srvr's reply. */
export function parseSrvr(text: string): { mode: string; zxid: string | null } {
  return {
    mode: /^Mode: (\S+)/m.exec(text)?.[1] ?? (/not currently serving/.test(text) ? 'not-serving' : 'unknown'),
    zxid: /^Zxid: (\S+)/m.exec(text)?.[1] ?? null,
  };
}

/** Every node's own view: mode and zxid from srvr. */
export async function zkView(ctx: DbContext): Promise<Record<string, { mode: string; zxid: string | null }>> {
  const out: Record<string, { mode: string; zxid: string | null }> = {};
  for (const n of ctx.nodes)
    out[n] = await fourLetterWord(address(ctx, n), 'srvr').then(parseSrvr, (e: Error) => ({
      mode: `unreachable: ${e.message}`,
      zxid: null,
    }));
  return out;
}

async function createDb(opts: { forceSync: boolean }): Promise<Database> {
  const inner = await daemonFor(opts.forceSync).create({});
  return Object.assign(Object.create(inner) as Database, {
    /** Ready when one server says it is the leader and every other a follower. */
    async awaitReady(ctx: DbContext, timeoutMs: number) {
      await inner.awaitReady(ctx, timeoutMs);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const view = await zkView(ctx);
        const modes = Object.values(view).map((v) => v.mode);
        if (
          modes.filter((m) => m === 'leader').length === 1 &&
          modes.every((m) => m === 'leader' || m === 'follower')
        )
          return;
        if (Date.now() > deadline) throw new Error(`zookeeper ensemble not formed: ${JSON.stringify(view)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    },
    /**
     * The read session to this node's server is shared by its clients and outlives each of them:
     * closed with the server, so nothing keeps reconnecting to a cluster that is gone (which kept the
     * run's process alive after its report).
     */
    async teardown(ctx: DbContext, node: string) {
      closeReadSession(node);
      await inner.teardown(ctx, node);
    },
    async primaries(ctx: DbContext) {
      const view = await zkView(ctx);
      return Object.entries(view)
        .filter(([, v]) => v.mode === 'leader')
        .map(([n]) => n);
    },
  });
}

type ZkClient = ReturnType<typeof zookeeper.createClient>;
interface ZkError {
  getCode?: () => number;
  code?: number;
  message: string;
}
const NO_NODE = -101;
const NODE_EXISTS = -110;
const BAD_VERSION = -103;

/** A znode's mzxid (the zxid of the write that last set it, 8 bytes big-endian) as ZooKeeper prints it. */
function zxidOf(stat: unknown): string | null {
  const z = (stat as { mzxid?: unknown } | undefined)?.mzxid;
  return Buffer.isBuffer(z) ? `0x${z.toString('hex').replace(/^0+(?=.)/, '')}` : null;
}

function codeOf(err: unknown): number | undefined {
  const e = err as ZkError;
  return typeof e?.getCode === 'function' ? e.getCode() : e?.code;
}

function call<T>(
  fn: (cb: (err: unknown, ...r: unknown[]) => void) => void,
  signal: AbortSignal,
): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error('timeout'));
    signal.addEventListener('abort', onAbort, { once: true });
    fn((err, ...r) => {
      signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(r as T[]);
    });
  });
}

/**
 * ZooKeeper's sync (op 9, request and reply both one path). node-zookeeper-client has no sync(); its
 * connection sends any request, and decodes a reply by the request's type: the request is written as
 * a sync and read back as a create, whose reply is the same single path.
 */
function sync(client: ZkClient, path: string, signal: AbortSignal): Promise<unknown[]> {
  const header = new jute.protocol.RequestHeader();
  const payload = new jute.protocol.GetACLRequest();
  payload.path = path;
  const request = new jute.Request(header, payload);
  const encode = request.toBuffer.bind(request);
  request.toBuffer = () => {
    header.type = jute.OP_CODES.SYNC;
    const b = encode();
    header.type = jute.OP_CODES.CREATE;
    return b;
  };
  const cm = (
    client as unknown as { connectionManager: { queue(r: unknown, cb: (e: unknown) => void): void } }
  ).connectionManager;
  return call((cb) => cm.queue(request, cb), signal);
}

/** One ZooKeeper session to one server, opened on first use and dropped when it expires. */
class Session {
  private zk: ZkClient | null = null;
  /** Every client this session opened and has not shut: concurrent gets may open more than one. */
  private readonly opened = new Set<ZkClient>();
  constructor(private readonly connectString: string) {}

  async get(signal: AbortSignal): Promise<ZkClient> {
    if (this.zk && this.zk.getState() === zookeeper.State.SYNC_CONNECTED) return this.zk;
    // Disconnected or expired (its server restarted, or a previous run's server): a new session.
    if (this.zk) this.shut(this.zk);
    this.zk = null;
    const zk = zookeeper.createClient(this.connectString, {
      sessionTimeout: 10_000,
      spinDelay: 250,
      retries: 0,
    });
    this.opened.add(zk);
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.shut(zk);
        reject(new Error('timeout connecting'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      zk.once('connected', () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
      zk.connect();
    });
    zk.on('expired', () => {
      if (this.zk === zk) this.zk = null;
      this.shut(zk);
    });
    this.zk = zk;
    return zk;
  }

  close(): void {
    for (const zk of [...this.opened]) this.shut(zk);
    this.zk = null;
  }

  /**
   * close() only queues the close-session request: a client that is not connected keeps trying to
   * reconnect (its retry loop sets CONNECTING again), which would keep the run's process alive once the
   * cluster is gone. Its reconnects are switched off and its socket dropped.
   */
  private shut(zk: ZkClient): void {
    this.opened.delete(zk);
    zk.close();
    const cm = (
      zk as unknown as {
        connectionManager: {
          connect(): void;
          connectTimeoutHandler?: NodeJS.Timeout;
          socket?: { destroy(): void };
        };
      }
    ).connectionManager;
    cm.connect = () => {};
    clearTimeout(cm.connectTimeoutHandler);
    setTimeout(() => cm.socket?.destroy(), 1000).unref();
  }
}

/**
 * Read sessions, one per server, shared by every client bound to it and opened at setup. ZooKeeper
 * answers a session's requests in order, so a read sent after a write that hangs (its server cut off
 * from the leader) would wait behind it; and opening a session is itself a write through the leader, so
 * a client reopened after a timeout could not open one on a cut-off server. Writes and cas go through
 * the client's own session.
 */
const readSessions = new Map<string, Session>();

/** The read session to one server (host:port), created on first use. */
/** By node: the address may be faultline's proxy rather than the server's own. */
function readSessionOf(node: string, at: string): Session {
  let s = readSessions.get(node);
  if (!s) {
    s = new Session(at);
    readSessions.set(node, s);
  }
  return s;
}

/**
 * Close and forget the read session to one server: the database's teardown, at the start and the end of
 * every run (the runner closes clients, never the pool, so a run's last clients cannot close it).
 */
function closeReadSession(node: string): void {
  readSessions.get(node)?.close();
  readSessions.delete(node);
}

/**
 * node-zookeeper-client throws from its socket data handler when it cannot decode a reply (an error code
 * it does not know, a reply out of step), which would end the whole test process. Such a connection is
 * dropped instead: its requests in flight fail or time out, and the session reconnects.
 */
const onSocketData = ConnectionManager.prototype.onSocketData;
ConnectionManager.prototype.onSocketData = function guarded(
  this: { pendingBuffer: unknown; socket?: { destroy(): void } },
  buffer: Buffer,
) {
  try {
    onSocketData.call(this, buffer);
  } catch {
    this.pendingBuffer = null;
    this.socket?.destroy();
  }
};

class ZkRegisterClient implements Client {
  private readonly reads: Session | null;
  private readonly writes: Session | null;
  constructor(
    private readonly c: ClientContext,
    node: string | null = null,
  ) {
    // Where the database says clients connect (faultline may point that at its proxy).
    const at = node === null ? null : c.db.clientAddress(c.ctx, node);
    this.reads = node === null || at === null ? null : readSessionOf(node, at);
    this.writes = at === null ? null : new Session(at);
  }

  async open(node: string): Promise<Client> {
    return new ZkRegisterClient(this.c, node);
  }

  async setup(): Promise<void> {
    const ac = new AbortController();
    const t = setTimeout(() => ac.abort(), 30_000);
    try {
      await (this.reads as Session).get(ac.signal);
      const zk = await (this.writes as Session).get(ac.signal);
      await call((cb) => zk.create(ROOT, cb), ac.signal).catch((e) => {
        if (codeOf(e) !== NODE_EXISTS) throw e;
      });
    } finally {
      clearTimeout(t);
    }
  }

  async close(): Promise<void> {
    this.writes?.close();
  }

  async teardown(): Promise<void> {
    for (const at of [...readSessions.keys()]) closeReadSession(at);
  }

  async invoke(op: ClientOp, ctx: InvokeContext): Promise<Completion> {
    const path = `${ROOT}/${op.key ?? 'r'}`;
    let zk: ZkClient;
    try {
      zk = await ((op.f === 'read' ? this.reads : this.writes) as Session).get(ctx.signal);
    } catch (err) {
      return { type: 'fail', error: `${NOT_APPLIED}: ${(err as Error).message}` };
    }
    try {
      if (op.f === 'read') {
        if (this.c.options.sync === true) await sync(zk, path, ctx.signal);
        const got = await this.get(zk, path, ctx.signal);
        return { type: 'ok', value: got.value, extras: { zxid: got.zxid } };
      }
      if (op.f === 'write') {
        return { type: 'ok', extras: { zxid: await this.write(zk, path, op.value as number, ctx.signal) } };
      }
      if (op.f === 'cas') {
        const [from, to] = op.value as [number, number];
        // The compare reads too: with sync on, it reads only after the server caught up with the leader
        // (a stale compare would fail a cas whose value was there). Nothing is written before it answers.
        if (this.c.options.sync === true)
          try {
            await sync(zk, path, ctx.signal);
          } catch (err) {
            return { type: 'fail', error: `${NOT_APPLIED}: sync before cas: ${(err as Error).message}` };
          }
        const cur = await this.get(zk, path, ctx.signal);
        if (cur.value !== from) return { type: 'fail', error: `cas: value is ${cur.value}` };
        try {
          const [stat] = await call(
            (cb) => zk.setData(path, Buffer.from(String(to)), cur.version, cb),
            ctx.signal,
          );
          return { type: 'ok', extras: { zxid: zxidOf(stat) } };
        } catch (err) {
          // Another write came between the read and the versioned set: nothing was written.
          if (codeOf(err) === BAD_VERSION || codeOf(err) === NO_NODE)
            return { type: 'fail', error: `${NOT_APPLIED}: cas version changed` };
          throw err;
        }
      }
      return { type: 'fail', error: `${NOT_APPLIED}: unknown op ${op.f}` };
    } catch (err) {
      const msg = (err as Error).message ?? String(err);
      // A read changed nothing; a write without an answer may or may not have happened.
      return { type: op.f === 'read' ? 'fail' : 'info', error: msg };
    }
  }

  private async get(
    zk: ZkClient,
    path: string,
    signal: AbortSignal,
  ): Promise<{ value: number | null; version: number; zxid: string | null }> {
    try {
      const [data, stat] = await call<unknown>((cb) => zk.getData(path, cb), signal);
      return {
        value: Number(String(data)),
        version: (stat as { version: number }).version,
        zxid: zxidOf(stat),
      };
    } catch (err) {
      if (codeOf(err) === NO_NODE) return { value: null, version: -1, zxid: null };
      throw err;
    }
  }

  /** setData, or create when the key is missing: the zxid of the write when ZooKeeper says it (setData). */
  private async write(
    zk: ZkClient,
    path: string,
    value: number,
    signal: AbortSignal,
  ): Promise<string | null> {
    const data = Buffer.from(String(value));
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const [stat] = await call((cb) => zk.setData(path, data, -1, cb), signal);
        return zxidOf(stat);
      } catch (err) {
        if (codeOf(err) !== NO_NODE) throw err;
      }
      try {
        await call((cb) => zk.create(path, data, cb), signal);
        return null;
      } catch (err) {
        if (codeOf(err) !== NODE_EXISTS) throw err;
      }
    }
    throw new Error('the key kept appearing and disappearing');
  }
}

/** An options schema of one optional boolean, `key`, `fallback` when absent; any other key refused. */
function oneBoolean(key: string, fallback: boolean) {
  return {
    safeParse(v: unknown) {
      const o = (v ?? {}) as Record<string, unknown>;
      const extra = Object.keys(o).filter((k) => k !== key);
      if (extra.length > 0)
        return {
          success: false as const,
          error: { issues: [{ path: [extra[0] as string], message: 'unknown option' }] },
        };
      if (o[key] !== undefined && typeof o[key] !== 'boolean')
        return { success: false as const, error: { issues: [{ path: [key], message: 'true or false' }] } };
      return { success: true as const, data: { [key]: o[key] ?? fallback } };
    },
  };
}

/** clientOptions: `sync` (default false). */
const options = oneBoolean('sync', false);
/** dbOptions: `forceSync` (default true). */
const dbOptions = oneBoolean('forceSync', true);

export default definePlugin({
  name: 'zookeeper',
  databases: [
    defineDatabase({
      name: 'zookeeper',
      summary: 'ZooKeeper 3.8 from Debian zookeeperd, a 3-node ensemble (one server per node)',
      defaultClient: 'zookeeper',
      binary: 'java',
      options: dbOptions,
      create: (o) => createDb({ forceSync: o.forceSync !== false }),
    }),
  ],
  clients: [
    defineClient({
      name: 'zookeeper',
      summary:
        'node-zookeeper-client: register and multi-register (getData, setData, versioned setData as cas); sync before reads with clientOptions.sync',
      workloads: ['register', 'multi-register'],
      hiddenRetries: false,
      endpoints: 'client-address',
      options,
      create: (c) => new ZkRegisterClient(c),
    }),
  ],
});
