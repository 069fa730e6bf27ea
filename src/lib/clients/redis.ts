import { Redis } from 'ioredis';
import { NOT_APPLIED } from '../../core/history/operation.ts';
import { errorMessage } from '../../core/util/errors.ts';
import type { RedisDb } from '../databases/redis.ts';
import type { DbContext } from '../databases/types.ts';
import { drainQueue } from './drain.ts';
import type { Client, ClientOp, Completion, InvokeContext } from './types.ts';

/**
 * The Redis client (ioredis). Writes and compare-and-sets go to the current primary; reads go to the
 * primary too, unless `readFromReplicas`, when each worker reads from the node it is bound to (a replica
 * for most workers): asynchronous replication then serves stale values, which the linearizability checker
 * must catch.
 *
 * ioredis is configured so it never hides an op: no offline queue and no automatic retry of a command
 * (a command sent twice would be one history entry for two effects). A command refused because the
 * connection is down was never sent: fail. A timeout, or a connection lost, after sending: info (reads:
 * fail).
 *
 * Workloads (listed in ./registry.ts): register, multi-register (GET / SET / a Lua compare-and-set), set
 * (SADD / SMEMBERS), counter (INCRBY / GET), list-append (one Lua script per transaction: atomic on the
 * primary), queue (RPUSH / LPOP).
 */
export interface RedisClientOptions {
  workload: string;
  db: RedisDb;
  ctx: DbContext;
  readFromReplicas?: boolean;
  prefix?: string;
  commandTimeoutMs?: number;
}

const CAS_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 else return 0 end`;

/** ARGV: a JSON list of [f, k, v]; KEYS are the list keys in the same order. Returns the JSON results. */
const TXN_SCRIPT = `
local mops = cjson.decode(ARGV[1])
local out = {}
for i, m in ipairs(mops) do
  if m[1] == 'append' then
    redis.call('RPUSH', KEYS[i], tostring(m[3]))
    out[i] = {m[1], m[2], m[3]}
  else
    local vals = redis.call('LRANGE', KEYS[i], 0, -1)
    local nums = {}
    for j, v in ipairs(vals) do nums[j] = tonumber(v) end
    out[i] = {m[1], m[2], nums}
  end
end
return cjson.encode(out)`;

export class RedisClient implements Client {
  private bound: Redis | undefined;
  private primaryConn: Redis | undefined;
  private primaryNode: string | undefined;
  private node = '';
  constructor(private readonly o: RedisClientOptions) {}

  private conn(node: string): Redis {
    const url = new URL(this.o.db.clientAddress(this.o.ctx, node));
    return new Redis({
      host: url.hostname,
      port: Number(url.port),
      lazyConnect: true,
      connectTimeout: 2000,
      commandTimeout: this.o.commandTimeoutMs ?? 3000,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      retryStrategy: () => 200,
    }).on('error', () => {
      // surfaced through the command that failed; without a listener ioredis prints every one
    });
  }

  async open(node: string): Promise<Client> {
    const c = new RedisClient(this.o);
    c.node = node;
    c.bound = this.conn(node);
    try {
      await c.bound.connect();
    } catch (err) {
      // Nobody will close a client whose open failed: without this its retry strategy reconnects forever.
      c.bound.disconnect();
      throw err;
    }
    return c;
  }

  /**
   * Whether the connection the op's last command went out on was ready. ioredis writes a command at once
   * on a ready connection (there is no offline queue), so a "Connection is closed." after that is a
   * command flushed from its queue while in flight, which may have run; on a connection that was not
   * ready, the same message means the command was refused unsent.
   */
  private sentOnReady = false;

  private issuing(conn: Redis): Redis {
    this.sentOnReady = conn.status === 'ready';
    return conn;
  }

  /** The primary's connection for the op's next command. */
  private async primary(): Promise<Redis> {
    return this.issuing(await this.primaryConnection());
  }

  /** The primary's connection, reopened when a failover moved the primary. */
  private async primaryConnection(): Promise<Redis> {
    const p = this.o.db.primary ?? this.o.ctx.nodes[0];
    if (!p) throw new Error('redis: no primary');
    if (p === this.node && this.bound) return this.bound;
    if (this.primaryConn && this.primaryNode === p) return this.primaryConn;
    this.primaryConn?.disconnect();
    this.primaryConn = this.conn(p);
    this.primaryNode = p;
    await this.primaryConn.connect();
    return this.primaryConn;
  }

  private async reader(): Promise<Redis> {
    return this.o.readFromReplicas && this.bound ? this.issuing(this.bound) : this.primary();
  }

  private k(key: string): string {
    return `${this.o.prefix ?? `faultline:${this.o.workload}`}:${key}`;
  }

  async setup(): Promise<void> {}
  async teardown(): Promise<void> {}

  async close(): Promise<void> {
    this.bound?.disconnect();
    this.primaryConn?.disconnect();
  }

  async invoke(op: ClientOp, _ctx: InvokeContext): Promise<Completion> {
    this.sentOnReady = false;
    try {
      return await this.dispatch(op);
    } catch (err) {
      return classifyRedis(op, err, this.sentOnReady);
    }
  }

  private async dispatch(op: ClientOp): Promise<Completion> {
    switch (this.o.workload) {
      case 'register':
      case 'multi-register': {
        const key = this.k(op.key ?? 'r');
        if (op.f === 'read') {
          const v = await (await this.reader()).get(key);
          return {
            type: 'ok',
            value: v === null ? null : JSON.parse(v),
            node: this.o.readFromReplicas ? this.node : (this.o.db.primary ?? this.node),
          };
        }
        if (op.f === 'write') {
          await (await this.primary()).set(key, JSON.stringify(op.value));
          return { type: 'ok' };
        }
        if (op.f === 'cas') {
          const [from, to] = op.value as [unknown, unknown];
          const r = await (await this.primary()).eval(
            CAS_SCRIPT,
            1,
            key,
            JSON.stringify(from),
            JSON.stringify(to),
          );
          return Number(r) === 1 ? { type: 'ok' } : { type: 'fail', error: 'cas-mismatch' };
        }
        break;
      }
      case 'set': {
        const key = this.k('set');
        if (op.f === 'add') {
          await (await this.primary()).sadd(key, String(op.value));
          return { type: 'ok' };
        }
        if (op.f === 'read') {
          const items = await (await this.reader()).smembers(key);
          return { type: 'ok', value: items.map(Number).sort((a, b) => a - b) };
        }
        break;
      }
      case 'counter': {
        const key = this.k('counter');
        if (op.f === 'add') {
          await (await this.primary()).incrby(key, Number(op.value));
          return { type: 'ok' };
        }
        if (op.f === 'read') {
          const v = await (await this.reader()).get(key);
          return { type: 'ok', value: v === null ? 0 : Number(v) };
        }
        break;
      }
      case 'queue': {
        // A Redis list on the primary: RPUSH to enqueue, LPOP to dequeue (null when empty).
        const key = this.k('queue');
        const conn = await this.primary();
        if (op.f === 'enqueue') {
          await conn.rpush(key, String(op.value));
          return { type: 'ok' };
        }
        if (op.f === 'dequeue') {
          const v = await conn.lpop(key);
          return { type: 'ok', value: v === null ? null : Number(v) };
        }
        if (op.f === 'drain')
          return await drainQueue(async () => {
            const v = await this.issuing(conn).lpop(key);
            return v === null ? null : Number(v);
          });
        break;
      }
      case 'list-append': {
        if (op.f !== 'txn') break;
        const mops = op.value as [string, unknown, unknown][];
        const keys = mops.map((m) => this.k(String(m[1])));
        const readOnly = mops.every((m) => m[0] === 'r');
        const conn = readOnly ? await this.reader() : await this.primary();
        const out = JSON.parse(
          (await conn.eval(TXN_SCRIPT, keys.length, ...keys, JSON.stringify(mops))) as string,
        ) as unknown[][];
        // cjson encodes an empty Lua table as {}: an empty read is []
        return {
          type: 'ok',
          value: out.map((m) => (m[0] === 'r' && !Array.isArray(m[2]) ? [m[0], m[1], []] : m)),
        };
      }
    }
    throw new Error(`redis client: ${this.o.workload} has no op ${op.f}`);
  }
}

function classifyRedis(op: ClientOp, err: unknown, sentOnReady: boolean): Completion {
  const msg = errorMessage(err);
  const notSent =
    /Stream isn't writeable|ECONNREFUSED|enableOfflineQueue/i.test(msg) ||
    (!sentOnReady && /Connection is closed/i.test(msg));
  const readOnly =
    op.f === 'read' ||
    (op.f === 'txn' && Array.isArray(op.value) && (op.value as unknown[][]).every((m) => m[0] === 'r'));
  if (readOnly) return { type: 'fail', error: msg };
  // Never sent: nothing reached the database, which is not its answer (recovery audits must not count
  // it as service).
  if (notSent && op.f !== 'cas') return { type: 'fail', error: `${NOT_APPLIED}: ${msg}` };
  const refused = notSent || /^(ERR|WRONGTYPE|NOSCRIPT|READONLY)/.test(msg);
  // A failed cas means "compared and saw another value" to the cas-register model: one that never ran
  // its compare observed nothing and can only be info.
  if (refused && op.f !== 'cas') return { type: 'fail', error: msg };
  return { type: 'info', error: refused ? `not applied: ${msg}` : `indeterminate: ${msg}` };
}
