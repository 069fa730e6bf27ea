import { appendFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Server } from 'node:net';
import { writeFileAtomicSync } from '../../core/util/atomic-write.ts';

/**
 * The SSH port forwards of a lab-like local cluster as their own process (started detached by
 * `cluster up --ssh-via-forward`, stopped by `cluster down`). argv[2] is JSON: `targets` maps each node to
 * its cluster address, `portsFile` receives `{node: port}` once every forward listens on 127.0.0.1.
 * Each accepted connection is piped to the node's sshd at <address>:22, as Vagrant's NAT forward does.
 */
interface ForwardArgs {
  targets: Record<string, string>;
  portsFile: string;
  logFile: string;
}

const args = JSON.parse(process.argv[2] ?? '{}') as ForwardArgs;
const log = (line: string) => appendFileSync(args.logFile, `${new Date().toISOString()} ${line}\n`);
process.on('SIGTERM', () => process.exit(0));

function forward(node: string, address: string): Promise<[string, number]> {
  const server: Server = createServer((inbound) => {
    const outbound = connect({ host: address, port: 22 });
    inbound.pipe(outbound).pipe(inbound);
    const close = () => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', close);
    outbound.on('error', (err) => {
      log(`${node}: ${address}:22: ${err.message}`);
      close();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve([node, (server.address() as AddressInfo).port]));
  });
}

Promise.all(Object.entries(args.targets).map(([node, address]) => forward(node, address)))
  .then((ports) => {
    // Written whole (the one atomic writer), so the parent never reads half a file.
    writeFileAtomicSync(args.portsFile, JSON.stringify(Object.fromEntries(ports)));
    log(`forwarding ${ports.map(([n, p]) => `127.0.0.1:${p} -> ${args.targets[n]}:22`).join(', ')}`);
  })
  .catch((err: Error) => {
    log(`cannot listen: ${err.message}`);
    process.exit(1);
  });
