import { fileURLToPath } from 'node:url';
import {
  type Client,
  type ClientContext,
  type ClientOp,
  type Completion,
  type DbContext,
  defineClient,
  defineDaemonDatabase,
  definePlugin,
  defineWorkload,
  type InvokeContext,
  NOT_APPLIED,
} from 'faultline';
import { eachThread, repeat, SECOND, stagger } from 'faultline/generators';
import { connect, type JetStreamClient, type JetStreamManager, type NatsConnection, StringCodec } from 'nats';

/**
 * NATS JetStream under faultline, through the public API only. The database is Debian's nats-server
 * (2.9), a daemon description with no code (nats.yaml: one server per node, its config file routing
 * it to every other, JetStream on, file storage under the data directory). JetStream's
 * default is to fsync periodically (every two minutes), not before acknowledging a publish.
 *
 * Workload `jetstream-queue`: clients publish unique integers with acknowledgement (a PubAck is `ok`,
 * no answer is `info`, "no responders" is a definite `fail`) to an R3 stream; after the faults are
 * healed every client reads the whole stream (`final-read`, repeated until a read reaches the end). Checkers: set-full (reading the
 * final reads) and no-lost-ack (every acknowledged publish must be in the final stream).
 */
const STREAM = 'FAULTLINE';
const SUBJECT = 'faultline.q';
const CLIENT_PORT = 4222;
/** Message reads in flight at once during the final read. */
const READ_BATCH = 200;
/** How long one final-read op reads before answering (the run's per-op timeout is 1.5 s). */
const READ_BUDGET_MS = 900;
/** Final reads per client (a whole read spans several ops): 12 did not finish reading 2,200 messages at load average 25. */
const FINAL_READS = 24;

function address(ctx: DbContext, node: string): string {
  const spec = ctx.remote.node(node);
  return spec.labels?.privateAddress ?? spec.host;
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

  /** Set by close(): a connection an op still in flight opens afterwards is closed at once. */
  private closed = false;

  private async conn(): Promise<{ js: JetStreamClient; jsm: JetStreamManager }> {
    if (!this.nc || !this.js || !this.jsm) {
      const nc =
        this.nc ??
        (await connect({
          servers: `${address(this.c.ctx, this.node as string)}:${CLIENT_PORT}`,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 250,
          timeout: 3000,
        }));
      // Closed while connecting (the op timed out and the runner retired this client): a connection
      // left open would reconnect forever once the cluster is gone and keep the run's process alive.
      if (this.closed) {
        await nc.close().catch(() => {});
        throw new Error('client closed');
      }
      this.nc = nc;
      // JetStream may not answer yet (no meta leader): the next op asks again.
      this.jsm = await nc.jetstreamManager({ timeout: 5000 });
      this.js = nc.jetstream({ timeout: 5000 });
    }
    return { js: this.js, jsm: this.jsm };
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
    this.closed = true;
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
   * replicas without the API queue; the stream allows it: a client's request is answered by the replica
   * on its own server, so each node's final read shows that node's copy of the stream). Reading a few thousand messages takes longer
   * than the run's per-op timeout on a busy host, so the read goes on across final-read ops: each reads
   * on from where the last stopped, for about a second, and answers a not-applied `fail` (a read changes
   * nothing) until it reaches the end; the next op reads the whole stream again. The stream's state
   * (first and last sequence, count) is asked at the start of each op: when it changed, the read starts over, so what `ok` returns is one state of the stream.
   * A "stream not found" answer comes from JetStream's meta leader: the stream is gone, and the read is
   * the empty stream, noted.
   */
  private cursor: { state: string; next: number; values: number[]; bySeq: (number | null)[] } | null = null;

  private async readAll(signal: AbortSignal): Promise<Completion> {
    const budget = Date.now() + READ_BUDGET_MS;
    try {
      const { jsm } = await this.conn();
      const info = await jsm.streams.info(STREAM);
      const st = info.state;
      const state = `${st.first_seq}:${st.last_seq}:${st.messages}`;
      if (this.cursor?.state !== state) this.cursor = { state, next: st.first_seq, values: [], bySeq: [] };
      const cur = this.cursor;
      const last = st.messages > 0 ? st.last_seq : cur.next - 1;
      while (cur.next <= last && Date.now() < budget && !signal.aborted) {
        const seqs: number[] = [];
        for (let q = cur.next; q <= last && seqs.length < READ_BATCH; q++) seqs.push(q);
        const got = await Promise.all(
          seqs.map((seq) =>
            jsm.direct.getMessage(STREAM, { seq }).then(
              (m) => Number(sc.decode(m.data)),
              (err: Error) => {
                // A deleted or never-written sequence: nothing there.
                if (/no message found|404/i.test(err.message)) return null;
                throw err;
              },
            ),
          ),
        );
        for (const v of got) {
          cur.bySeq.push(v);
          if (v !== null) cur.values.push(v);
        }
        cur.next += seqs.length;
      }
      if (cur.next <= last)
        return {
          type: 'fail',
          error: `${NOT_APPLIED}: partial read: ${cur.next - st.first_seq} of ${st.messages}, continuing`,
        };
      this.cursor = null;
      // bySeq: what this node's replica holds at each sequence from first_seq (null: nothing there), so
      // two replicas holding different messages at one sequence show as such (examples/nats/loss-timing.ts).
      return {
        type: 'ok',
        value: [...cur.values].sort((a, b) => a - b),
        extras: { streamState: st, bySeq: cur.bySeq },
      };
    } catch (err) {
      const msg = (err as Error).message;
      if (/stream not found|10059/i.test(msg))
        return { type: 'ok', value: [], extras: { streamLost: `stream ${STREAM} not found: ${msg}` } };
      return { type: 'fail', error: msg };
    }
  }
}

export default definePlugin({
  name: 'nats',
  databases: [defineDaemonDatabase(fileURLToPath(new URL('./nats.yaml', import.meta.url)))],
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
          // Reads per client, about a second apart: a whole read spans several ops (see readAll), and a
          // cluster still electing stream leaders after a power failure may not answer the first.
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
