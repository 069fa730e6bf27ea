import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A loopback TCP port nobody listens on right now (for a server a test starts). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** Wait until 127.0.0.1:port accepts a TCP connection, or throw after `deadlineMs`. */
export async function listening(port: number, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const ok = await new Promise<boolean>((r) => {
      const c = net.connect(port, '127.0.0.1', () => {
        c.destroy();
        r(true);
      });
      c.on('error', () => r(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listens on 127.0.0.1:${port} after ${deadlineMs} ms`);
    await sleep(100);
  }
}
