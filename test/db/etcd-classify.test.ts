import test from 'ava';
import { NOT_APPLIED, wasNotApplied } from '../../src/core/history/operation.ts';
import { classify } from '../../src/lib/clients/etcd.ts';

const refused = () =>
  new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
const reset = () =>
  new TypeError('fetch failed', { cause: Object.assign(new Error('socket'), { code: 'UND_ERR_SOCKET' }) });

test('a cas refused before it reached etcd is a fail marked not-applied; checkers drop it', (t) => {
  const c = classify({ f: 'cas', value: [1, 2] } as never, refused());
  t.is(c.type, 'fail');
  t.true(String(c.error).startsWith(NOT_APPLIED));
  t.true(wasNotApplied({ type: c.type as 'fail', error: c.error }));
});

test('a cas whose connection broke after sending may have happened: info, never a fail', (t) => {
  const c = classify({ f: 'cas', value: [1, 2] } as never, reset());
  t.is(c.type, 'info');
  t.false(wasNotApplied({ type: 'info', error: c.error }));
});

test('an unanswered write is info; a refused write is a not-applied fail', (t) => {
  t.is(classify({ f: 'write', value: 3 } as never, reset()).type, 'info');
  const c = classify({ f: 'write', value: 3 } as never, refused());
  t.is(c.type, 'fail');
  t.true(String(c.error).startsWith(NOT_APPLIED));
});

/** A gateway answering every request with grpc-gateway 1.6.4's error body for one gRPC status. */
async function gatewayAnswering(httpStatus: number, code: number, message: string) {
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(httpStatus, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: message, message, code }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((ok) => server.close(ok)) };
}

async function invokeThrough(gw: { url: string }, op: { f: string; value: unknown; key?: string }) {
  const { EtcdClient } = await import('../../src/lib/clients/etcd.ts');
  const client = await new EtcdClient({ workload: 'multi-register', urls: { n1: gw.url } }).open('n1');
  return client.invoke({ key: 'k', ...op } as never, { signal: AbortSignal.timeout(5000) });
}

test("a write the shutting-down member's gateway refused with grpc-go's ErrClientConnClosing was never sent: not applied", async (t) => {
  // HTTP 408 + code 1 (Canceled): what grpc-gateway's DefaultHTTPError makes of ErrClientConnClosing.
  const gw = await gatewayAnswering(408, 1, 'grpc: the client connection is closing');
  try {
    for (const op of [
      { f: 'write', value: 3 },
      { f: 'cas', value: [1, 2] },
    ]) {
      const c = await invokeThrough(gw, op);
      t.is(c.type, 'fail', op.f);
      t.true(String(c.error).startsWith(NOT_APPLIED), String(c.error));
      t.true(String(c.error).includes('grpc: the client connection is closing'));
    }
  } finally {
    await gw.close();
  }
});

test('a write cut off in flight (transport is closing) or cancelled inside etcd stays indeterminate', async (t) => {
  for (const [status, code, message] of [
    [503, 14, 'transport is closing'],
    [408, 1, 'etcdserver: request cancelled'],
    [408, 1, 'context canceled'],
  ] as const) {
    const gw = await gatewayAnswering(status, code, message);
    try {
      const c = await invokeThrough(gw, { f: 'write', value: 3 });
      t.is(c.type, 'info', message);
      t.false(wasNotApplied({ type: 'info', error: c.error }));
    } finally {
      await gw.close();
    }
  }
});
