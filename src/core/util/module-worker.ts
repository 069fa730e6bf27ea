import { Worker } from 'node:worker_threads';

/**
 * Start a worker thread on the module `name` next to `callerUrl` (the caller's `import.meta.url`).
 * Built (dist/*.js) it is a plain JS worker; run from the TypeScript sources the worker must load TS
 * too, so a tiny bootstrap registers tsx in the worker first (Node 20 does not apply `--import`
 * loader hooks to a worker's entry module). The worker reads its input from `workerData.job`.
 */
export function startModuleWorker(callerUrl: string, name: string, job: unknown): Worker {
  const fromSource = callerUrl.endsWith('.ts');
  if (!fromSource) return new Worker(new URL(`./${name}.js`, callerUrl), { workerData: { job } });
  const bootstrap = `const { workerData } = require('node:worker_threads');
import(workerData.tsxApi).then((api) => { api.register(); return import(workerData.entry); });`;
  return new Worker(bootstrap, {
    eval: true,
    workerData: {
      job,
      tsxApi: import.meta.resolve('tsx/esm/api'),
      entry: new URL(`./${name}.ts`, callerUrl).href,
    },
  });
}
