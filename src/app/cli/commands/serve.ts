import type { Command } from 'commander';
import { helpEpilogue } from '../help.ts';

/** `faultline serve`: the read-only results browser over a session store. */
export function register(program: Command): void {
  program
    .command('serve')
    .description('browse a session store: verdict grid, trends, session pages, diffs (read-only)')
    .addHelpText(
      'after',
      helpEpilogue(['faultline serve', 'faultline serve --root /srv/nightly --port 8080 --last 60']),
    )
    .option('--root <dir>', 'session store root', './test-sessions/')
    .option('--port <n>', 'port (0 picks a free one)', '8080')
    .option('--host <addr>', 'address to bind; other than 127.0.0.1 exposes the store', '127.0.0.1')
    .option('--last <n>', 'sessions per plan on the index', '30')
    .action(async (o: { root: string; port: string; host: string; last: string }) => {
      const { storeRoot } = await import('../../store/store.ts');
      const { startServer } = await import('../../store/results-server.ts');
      const { UserError } = await import('../../../core/util/errors.ts');
      const port = Number(o.port);
      const last = Number(o.last);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UserError(`--port: ${o.port}`);
      if (!Number.isInteger(last) || last < 1) throw new UserError(`--last: ${o.last}`);
      const root = storeRoot(o.root);
      const server = await startServer(root, { port, host: o.host, last });
      const addr = server.address();
      const bound = typeof addr === 'object' && addr ? addr.port : port;
      process.stderr.write(`faultline serve: http://${o.host}:${bound}/ (store ${root}; Ctrl-C to stop)\n`);
      await new Promise<void>((resolve) => {
        const stop = () => server.close(() => resolve());
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
