// The load side of bench:proxy, in its own process so the proxy under test has the bench's process to
// itself: a loopback echo server, and clients sending fixed-size requests to a port (the echo server's
// own, or the proxy's in front of it) at a fixed rate (open loop, pipelined) or as fast as replies come
// (closed loop). Every loop is bounded by its duration. Driven by IPC messages; replies with the
// latencies in microseconds.
import net from 'node:net';

const SIZE = 64;

const server = net.createServer((s) => {
  s.setNoDelay(true);
  s.on('data', (b) => s.write(b));
  s.on('error', () => {});
});
server.listen(0, '127.0.0.1', () => process.send({ echoPort: server.address().port }));

function connect(port) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.setNoDelay(true);
    s.once('error', reject);
  });
}

async function run({ port, mode, rate, durationMs, conns }) {
  const sockets = await Promise.all(Array.from({ length: conns }, () => connect(port)));
  const lat = [];
  const payload = Buffer.alloc(SIZE, 97);
  let sent = 0;
  let done = 0;
  let stop = false;
  const queues = sockets.map(() => []);
  const t0 = process.hrtime.bigint();
  const send = (i) => {
    queues[i].push(process.hrtime.bigint());
    sockets[i].write(payload);
    sent++;
  };
  sockets.forEach((s, i) => {
    let pending = 0;
    s.on('data', (b) => {
      pending += b.length;
      while (pending >= SIZE) {
        pending -= SIZE;
        const at = queues[i].shift();
        lat.push(Number(process.hrtime.bigint() - at) / 1000);
        done++;
        if (mode === 'closed' && !stop) send(i);
      }
    });
  });
  if (mode === 'closed') for (let i = 0; i < conns; i++) send(i);
  else {
    let due = 0;
    let next = 0;
    const timer = setInterval(() => {
      const elapsed = Number(process.hrtime.bigint() - t0) / 1e6;
      due = Math.floor((elapsed * rate) / 1000);
      while (sent < due) send(next++ % conns);
    }, 1);
    await new Promise((r) => setTimeout(r, durationMs));
    clearInterval(timer);
  }
  if (mode === 'closed') await new Promise((r) => setTimeout(r, durationMs));
  stop = true;
  const elapsedMs = Number(process.hrtime.bigint() - t0) / 1e6;
  // Let replies in flight arrive (bounded), then close.
  const deadline = Date.now() + 2000;
  while (done < sent && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  for (const s of sockets) s.destroy();
  return { lat, sent, done, elapsedMs };
}

process.on('message', async (m) => {
  if (m === 'exit') {
    server.close();
    process.exit(0);
  }
  process.send({ result: await run(m) });
});
