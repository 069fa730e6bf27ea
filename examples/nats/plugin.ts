import { fileURLToPath } from 'node:url';
import {
  type Client,
  type ClientContext,
  type ClientOp,
  type Completion,
  type DB,
  type DbContext,
  defineClient,
  defineDaemonDatabase,
  defineDatabase,
  definePlugin,
  defineWorkload,
  eachThread,
  type InvokeContext,
  NOT_APPLIED,
  repeat,
  SECOND,
  shellQuote,
  stagger,
} from 'faultline';
import { connect, type JetStreamClient, type JetStreamManager, type NatsConnection, StringCodec } from 'nats';

/**
 * NATS JetStream under faultline, through the public API only. The database is Debian's nats-server
 * (2.9): a daemon description started with a config file written at setup (one server per node, the
 * three routed into one cluster, JetStream on, file storage under the data directory). JetStream's
 * default is to fsync periodically (every two minutes), not before acknowledging a publish.
 *
 * Workload `jetstream-queue`: clients publish unique integers with acknowledgement (a PubAck is `ok`,
 * no answer is `info`, "no responders" is a definite `fail`) to an R3 stream; after the faults are
 * healed every client reads the whole stream (`final-read`, four times about a second apart). Checkers: set-full (reading the
 * final reads) and no-lost-ack (every acknowledged publish must be in the final stream).
 */
const STREAM = 'FAULTLINE';
const SUBJECT = 'faultline.q';
const CLIENT_PORT = 4222;
const ROUTE_PORT = 6222;
const MONITOR_PORT = 8222;
/** Message reads in flight at once during the final read. */
const READ_BATCH = 500;
/** Final reads per client. */
const FINAL_READS = 4;

const daemon = defineDaemonDatabase(fileURLToPath(new URL('./nats.yaml', import.meta.url)));

function address(ctx: DbContext, node: string): string {
  const spec = ctx.remote.node(node);
  return spec.labels?.privateAddress ?? spec.host;
}

/** nats-server's config for one node: its routes name every other node. */
export function natsConfig(ctx: DbContext, node: string, dataDir: string): string {
  const me = address(ctx, node);
  const routes = ctx.nodes.filter((n) => n !== node).map((n) => `nats://${address(ctx, n)}:${ROUTE_PORT}`);
  return [
    `server_name: ${node}`,
    `listen: ${me}:${CLIENT_PORT}`,
    `http: ${me}:${MONITOR_PORT}`,
    `jetstream { store_dir: "${dataDir}/js", max_memory_store: 64MB, max_file_store: 1GB }`,
    `cluster { name: faultline, listen: ${me}:${ROUTE_PORT}, routes: [${routes.join(', ')}] }`,
    '',
  ].join('\n');
}

async function createDb(): Promise<DB> {
  const inner = await daemon.create({});
  const dataDir = (ctx: DbContext, node: string) => inner.dataDir?.(ctx, node) as string;
  return Object.assign(Object.create(inner) as DB, {
    async setup(ctx: DbContext, node: string) {
      const dir = dataDir(ctx, node);
      await ctx.remote.exec(
        node,
        `mkdir -p ${shellQuote(dir)} && printf '%s' ${shellQuote(natsConfig(ctx, node, dir))} > ${shellQuote(`${dir}/../nats.conf`)}`,
        { sudo: true },
      );
      await inner.setup(ctx, node);
    },
  });
}

const sc = StringCodec();

class JetStreamClientImpl implements Client {
  private nc: NatsConnection | null = null;
  private js: JetStreamClient | null = null;
  private jsm: JetStreamManager | null = null;

  constructor(
    private readonly c: ClientContext,
    private readonly node: string | null = null,
  ) {}

  async open(node: string): Promise<Client> {
    return new JetStreamClientImpl(this.c, node);
  }

  private async conn(): Promise<{ js: JetStreamClient; jsm: JetStreamManager }> {
    if (!this.nc) {
      this.nc = await connect({
        servers: `${address(this.c.ctx, this.node as string)}:${CLIENT_PORT}`,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        timeout: 3000,
      });
      this.js = this.nc.jetstream({ timeout: 5000 });
      this.jsm = await this.nc.jetstreamManager({ timeout: 5000 });
    }
    return { js: this.js as JetStreamClient, jsm: this.jsm as JetStreamManager };
  }

  /** Create the R3 stream once (every client tries; "already in use" is fine), retried while JetStream elects. */
  async setup(): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const { jsm } = await this.conn();
        await jsm.streams.add({
          name: STREAM,
          subjects: [SUBJECT],
          num_replicas: 3,
          storage: 'file' as never,
          allow_direct: true,
        });
        return;
      } catch (err) {
        const msg = (err as Error).message;
        if (/already in use/i.test(msg)) return;
        if (Date.now() > deadline) throw new Error(`creating stream ${STREAM}: ${msg}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  async teardown(): Promise<void> {}

  async close(): Promise<void> {
    await this.nc?.close().catch(() => {});
    this.nc = null;
  }

  async invoke(op: ClientOp, ctx: InvokeContext): Promise<Completion> {
    if (op.f === 'add') return this.publish(op.value as number);
    if (op.f === 'final-read' || op.f === 'read') return this.readAll(ctx.signal);
    return { type: 'fail', error: `${NOT_APPLIED}: unknown op ${op.f}` };
  }

  private async publish(value: number): Promise<Completion> {
    let sent = false;
    try {
      const { js } = await this.conn();
      sent = true;
      const ack = await js.publish(SUBJECT, sc.encode(String(value)), {
        msgID: String(value),
        timeout: 5000,
      });
      return { type: 'ok', extras: { seq: ack.seq, ...(ack.duplicate && { duplicate: true }) } };
    } catch (err) {
      const msg = (err as Error).message;
      // No responders: no stream leader took the message, so it was not stored.
      if (!sent || /503|no responders/i.test(msg)) return { type: 'fail', error: `${NOT_APPLIED}: ${msg}` };
      return { type: 'info', error: msg };
    }
  }

  /**
   * Every message of the stream by sequence, through JetStream's direct get (answered by the stream's
   * replicas without the API queue; the stream allows it), many requests in flight: the run's per-op
   * timeout is short. Read at quiescence, after the faults are healed. A "stream not found" answer comes from JetStream's meta leader: the
   * stream is gone, so the read is the empty stream, noted. Anything else is retried until the deadline.
   */
  private async readAll(signal: AbortSignal): Promise<Completion> {
    let lastError = '';
    while (!signal.aborted) {
      try {
        const { jsm } = await this.conn();
        const info = await jsm.streams.info(STREAM);
        const seqs: number[] = [];
        if (info.state.messages > 0)
          for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) seqs.push(seq);
        const values: number[] = [];
        for (let i = 0; i < seqs.length; i += READ_BATCH) {
          const got = await Promise.all(
            seqs.slice(i, i + READ_BATCH).map((seq) =>
              jsm.direct.getMessage(STREAM, { seq }).then(
                (m) => Number(sc.decode(m.data)),
                (err: Error) => {
                  // A deleted or never-written sequence: nothing there.
                  if (/no message found|10037/i.test(err.message)) return null;
                  throw err;
                },
              ),
            ),
          );
          for (const v of got) if (v !== null) values.push(v);
        }
        return { type: 'ok', value: values.sort((a, b) => a - b), extras: { streamState: info.state } };
      } catch (err) {
        lastError = (err as Error).message;
        if (/stream not found|10059/i.test(lastError))
          return {
            type: 'ok',
            value: [],
            extras: { streamLost: `stream ${STREAM} not found: ${lastError}` },
          };
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return { type: 'fail', error: lastError || 'timeout' };
  }
}

export default definePlugin({
  name: 'nats',
  databases: [
    defineDatabase({
      name: 'nats',
      summary: 'NATS JetStream from Debian nats-server, three routed servers, an R3 file stream',
      defaultClient: 'nats-jetstream',
      binary: 'nats-server',
      create: () => createDb(),
    }),
  ],
  clients: [
    defineClient({
      name: 'nats-jetstream',
      summary:
        'the official nats client: publish with acknowledgement (add), read the whole stream (final-read)',
      workloads: ['jetstream-queue'],
      hiddenRetries: false,
      create: (c) => new JetStreamClientImpl(c),
    }),
  ],
  workloads: [
    defineWorkload({
      name: 'jetstream-queue',
      summary:
        'unique integers published with acknowledgement; one read of the whole stream per client at the end',
      ops: ['add', 'final-read'],
      create: () => {
        let next = 0;
        return {
          name: 'jetstream-queue',
          generator: () => repeat(() => ({ f: 'add', value: next++ })),
          // Four reads per client, about a second apart: a cluster still electing stream leaders after a
          // power failure may not answer the first within the run's per-op timeout.
          finalGenerator: () =>
            eachThread(() => stagger(SECOND, repeat({ f: 'final-read', value: null }, FINAL_READS))),
          checkers: [
            { name: 'set-full', options: { readF: 'final-read' } },
            { name: 'no-lost-ack', options: {} },
          ],
          clientOptions: {},
        };
      },
    }),
  ],
});
