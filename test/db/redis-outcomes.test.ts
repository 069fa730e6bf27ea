import net from 'node:net';
import test from 'ava';
import { NOT_APPLIED } from '../../src/core/history/operation.ts';
import { RedisClient } from '../../src/lib/clients/redis.ts';
import type { Client, ClientOp, Completion } from '../../src/lib/clients/types.ts';
import type { RedisDb } from '../../src/lib/databases/redis.ts';
import type { DbContext } from '../../src/lib/databases/types.ts';

// How the Redis client records an op whose answer never came. A write the server may have applied must
// be info (indeterminate), never fail: a failed append that a later read shows would be reported as an
// aborted read (G1a), and a failed write that took effect breaks the linearizability check. A command
// ioredis refused without sending is fail, marked not applied. The server here speaks just enough RESP
// to let ioredis connect, and then does what each case needs with the data command.

type Behaviour = 'drop' | 'hang' | 'error' | 'ok' | 'three-then-drop';

/** Commands in a RESP buffer as arrays of words, and the bytes left over (a command cut short). */
function parseCommands(buf: Buffer): { commands: string[][]; rest: Buffer } {
  const commands: string[][] = [];
  let i = 0;
  const line = (): string | null => {
    const end = buf.indexOf('\r\n', i);
    if (end < 0) return null;
    const s = buf.toString('latin1', i, end);
    i = end + 2;
    return s;
  };
  for (;;) {
    const start = i;
    const head = line();
    if (head === null || !head.startsWith('*')) return { commands, rest: buf.subarray(start) };
    const words: string[] = [];
    for (let n = Number(head.slice(1)); n > 0; n--) {
      const len = line();
      if (len === null || i + Number(len.slice(1)) + 2 > buf.length)
        return { commands, rest: buf.subarray(start) };
      words.push(buf.toString('utf8', i, i + Number(len.slice(1))));
      i += Number(len.slice(1)) + 2;
    }
    commands.push(words);
  }
}

/** A loopback server that answers the connection's hand-shake and treats data commands as `behaviour`. */
async function fakeRedis(behaviour: Behaviour) {
  const seen: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    let pending: Buffer = Buffer.alloc(0);
    s.on('data', (chunk) => {
      const { commands, rest } = parseCommands(Buffer.concat([pending, chunk]));
      pending = rest;
      for (const [name = ''] of commands) {
        const cmd = name.toUpperCase();
        if (cmd === 'INFO') {
          const body = '# Server\r\nredis_version:7.0.0\r\nloading:0\r\n';
          s.write(`$${Buffer.byteLength(body)}\r\n${body}\r\n`);
        } else if (cmd === 'HELLO')
          s.write("-ERR unknown command 'HELLO'\r\n"); // RESP2, as Redis 5
        else if (cmd === 'CLIENT' || cmd === 'SELECT') s.write('+OK\r\n');
        else {
          seen.push(cmd);
          if (behaviour === 'drop' || (behaviour === 'three-then-drop' && seen.length > 3)) s.destroy();
          else if (behaviour === 'three-then-drop') s.write(`$1\r\n${seen.length}\r\n`);
          else if (behaviour === 'error') s.write('-ERR refused by the test server\r\n');
          else if (behaviour === 'ok') s.write(cmd === 'GET' ? '$-1\r\n' : '+OK\r\n');
          // 'hang': the command was received and is never answered
        }
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    seen,
    /** Stop listening and cut every connection: the port then refuses. */
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

async function clientFor(port: number, workload: string): Promise<Client> {
  const db = { clientAddress: () => `redis://127.0.0.1:${port}`, primary: 'n1' } as unknown as RedisDb;
  const ctx = { nodes: ['n1'] } as unknown as DbContext;
  return new RedisClient({ workload, db, ctx, commandTimeoutMs: 300 }).open('n1');
}

const signal = new AbortController().signal;
const op = (f: string, value: unknown): ClientOp => ({ f, value, process: 0, node: 'n1', key: 'r' });
const txn = op('txn', [
  ['append', 1, 1],
  ['r', 1, null],
]);

async function outcome(behaviour: Behaviour, workload: string, o: ClientOp) {
  const server = await fakeRedis(behaviour);
  const client = await clientFor(server.port, workload);
  try {
    const done: Completion = await client.invoke(o, { signal });
    return { done, seen: server.seen };
  } finally {
    await client.close();
    await server.close();
  }
}

test('a write whose connection drops after the server received it is info, never fail', async (t) => {
  for (const [workload, o] of [
    ['register', op('write', 3)],
    ['register', op('cas', [1, 2])],
    ['list-append', txn],
    ['counter', op('add', 1)],
  ] as const) {
    const { done, seen } = await outcome('drop', workload, o);
    t.log(`${workload} ${o.f}: ${done.type} ${String(done.error)}`);
    t.is(seen.length, 1, `${o.f}: the server received the command`);
    t.is(done.type, 'info', `${workload} ${o.f}: ${JSON.stringify(done)}`);
    t.false(String(done.error).startsWith(NOT_APPLIED), String(done.error));
  }
});

test('a write the server never answers is info after the command timeout', async (t) => {
  const { done, seen } = await outcome('hang', 'register', op('write', 3));
  t.deepEqual(seen, ['SET']);
  t.is(done.type, 'info', JSON.stringify(done));
  t.regex(String(done.error), /indeterminate/);
});

test('a read that gets no answer is fail: it changed nothing', async (t) => {
  for (const behaviour of ['drop', 'hang'] as const) {
    const { done } = await outcome(behaviour, 'register', op('read', null));
    t.is(done.type, 'fail', `${behaviour}: ${JSON.stringify(done)}`);
  }
});

test('an error reply is fail; a cas refused is info, since it compared nothing', async (t) => {
  const write = await outcome('error', 'register', op('write', 3));
  t.is(write.done.type, 'fail', JSON.stringify(write.done));
  const cas = await outcome('error', 'register', op('cas', [1, 2]));
  t.is(cas.done.type, 'info', JSON.stringify(cas.done));
  const ok = await outcome('ok', 'register', op('write', 3));
  t.is(ok.done.type, 'ok');
});

test('a write in flight when the client itself closes is info: ioredis says "Connection is closed." for it too', async (t) => {
  const server = await fakeRedis('hang');
  const client = await clientFor(server.port, 'register');
  try {
    const pending = client.invoke(op('write', 3), { signal });
    await new Promise((r) => setTimeout(r, 50));
    t.deepEqual(server.seen, ['SET']);
    await client.close();
    const done = await pending;
    t.is(done.type, 'info', JSON.stringify(done));
    t.regex(String(done.error), /Connection is closed/);
  } finally {
    await server.close();
  }
});

test('a drain cut off after taking elements is info with what it took, not fail', async (t) => {
  const { done, seen } = await outcome('three-then-drop', 'queue', op('drain', null));
  t.deepEqual(seen, ['LPOP', 'LPOP', 'LPOP', 'LPOP']);
  t.is(done.type, 'info', JSON.stringify(done));
  t.deepEqual(done.value, [1, 2, 3]);
  const nothing = await outcome('drop', 'queue', op('drain', null));
  t.is(nothing.done.type, 'info', 'a first LPOP lost in flight may have taken one');
});

test('a write on a connection already down is not sent, and recorded fail, not applied', async (t) => {
  const server = await fakeRedis('ok');
  const client = await clientFor(server.port, 'register');
  try {
    await server.close();
    // The client notices the close and is reconnecting to a port that now refuses.
    await new Promise((r) => setTimeout(r, 100));
    const done = await client.invoke(op('write', 3), { signal });
    t.is(done.type, 'fail', JSON.stringify(done));
    t.true(String(done.error).startsWith(NOT_APPLIED), String(done.error));
    t.deepEqual(server.seen, []);
  } finally {
    await client.close();
  }
  // Closed by us: ioredis refuses the command without sending it.
  const after = await client.invoke(op('write', 4), { signal });
  t.is(after.type, 'fail', JSON.stringify(after));
  t.true(String(after.error).startsWith(NOT_APPLIED), String(after.error));
});
