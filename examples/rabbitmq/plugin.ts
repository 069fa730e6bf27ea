import { fileURLToPath } from 'node:url';
import amqp, { type Channel, type ChannelModel, type ConfirmChannel } from 'amqplib';
import {
  type Client,
  type ClientContext,
  type ClientOp,
  type Completion,
  defineClient,
  defineDaemonDatabase,
  definePlugin,
  NOT_APPLIED,
} from 'faultline';
import { drainQueue } from 'faultline/clients';

/**
 * RabbitMQ through faultline's public API: the daemon description (rabbitmq.yaml) installs, configures,
 * starts and clusters the brokers; this file is only the client for the built-in `queue` workload, on a
 * quorum queue (replicated on every node by Raft). A publish is `ok` once the broker confirmed it; a get
 * is acknowledged before it is reported. Two plans use it: rabbitmq-queue.md beside it (a broker killed) and
 * plans/rabbitmq-durability.md (power failures of one broker and of every broker, through the lazy
 * filesystem; docs/findings/durability.md has the results).
 */
const QUEUE = 'faultline';

/** The factory (no connection) opens one client per worker, each with its own connection and channel. */
class RabbitClient implements Client {
  constructor(
    private readonly c: ClientContext,
    private readonly conn?: ChannelModel,
    private readonly ch?: ConfirmChannel,
  ) {}

  async open(node: string): Promise<Client> {
    const conn = await amqp.connect(`amqp://guest:guest@${this.c.db.clientAddress(this.c.ctx, node)}`);
    const ch = await conn.createConfirmChannel();
    // A broken connection is seen by the next op as an error; it must not become an uncaught one.
    for (const emitter of [conn, ch]) emitter.on('error', () => {});
    return new RabbitClient(this.c, conn, ch);
  }

  async setup(): Promise<void> {
    await this.ch?.assertQueue(QUEUE, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  }

  async teardown(): Promise<void> {}

  async close(): Promise<void> {
    await this.conn?.close();
  }

  async invoke(op: ClientOp): Promise<Completion> {
    const ch = this.ch as ConfirmChannel;
    try {
      if (op.f === 'enqueue') {
        ch.sendToQueue(QUEUE, Buffer.from(String(op.value)), { persistent: true });
        await ch.waitForConfirms();
        return { type: 'ok' };
      }
      if (op.f === 'dequeue') return { type: 'ok', value: await take(ch) };
      if (op.f === 'drain') return await drainQueue(() => take(ch));
      return { type: 'fail', error: `${NOT_APPLIED}: no ${op.f}` };
    } catch (err) {
      // A publish without a confirm, or a get whose answer was lost: it may have happened.
      return { type: 'info', error: String(err) };
    }
  }
}

/** One message off the queue, acknowledged, or null when the queue is empty. */
async function take(ch: Channel): Promise<number | null> {
  const msg = await ch.get(QUEUE, { noAck: false });
  if (msg === false) return null;
  ch.ack(msg);
  return Number(msg.content.toString());
}

export default definePlugin({
  databases: [defineDaemonDatabase(fileURLToPath(new URL('./rabbitmq.yaml', import.meta.url)))],
  clients: [
    defineClient({
      name: 'rabbitmq-amqp',
      workloads: ['queue'],
      hiddenRetries: false,
      create: (c) => new RabbitClient(c),
    }),
  ],
});
