import { appendFileSync } from 'node:fs';
import { startAptProxy } from './vm-apt-proxy.ts';

/**
 * The apt proxy as its own process (started detached by `cluster up --vm`, stopped by `cluster down`):
 * argv[2] is the JSON of AptProxyOptions plus `logFile`.
 */
const opts = JSON.parse(process.argv[2] ?? '{}') as Parameters<typeof startAptProxy>[0] & { logFile: string };
const log = (line: string) => appendFileSync(opts.logFile, `${new Date().toISOString()} ${line}\n`);
process.on('SIGTERM', () => process.exit(0));
startAptProxy({ ...opts, log })
  .then(() => log(`listening on ${opts.host}:${opts.port} for ${opts.allowHosts.join(', ')}`))
  .catch((err: Error) => {
    log(`cannot listen: ${err.message}`);
    process.exit(1);
  });
