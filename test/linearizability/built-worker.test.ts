import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { execa } from 'execa';
import { kvHistory } from '../helpers/kv-history.ts';

/**
 * The worker path as it runs when faultline is built (dist/*.js, a plain JS worker, no tsx): compile
 * the checker with tsc into a temporary directory and run a parallel check there.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));

test('compiled to JavaScript, the worker threads load and give the right verdicts', async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'faultline-lin-build-'));
  try {
    const tsconfig = join(out, 'tsconfig.json');
    writeFileSync(
      tsconfig,
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: {
          noEmit: false,
          outDir: out,
          rootDir: root,
          sourceMap: false,
          typeRoots: [join(root, 'node_modules/@types')],
        },
        include: [],
        files: [
          join(root, 'checkers/linearizability/check.ts'),
          join(root, 'checkers/linearizability/models/index.ts'),
          join(root, 'checkers/linearizability/parallel.ts'),
          join(root, 'checkers/linearizability/worker.ts'),
          join(root, 'src/core/history/read.ts'),
          join(root, 'src/core/history/pair.ts'),
        ],
      }),
    );
    const tsc = await execa('node', [join(root, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], {
      reject: false,
    });
    t.is(tsc.exitCode, 0, tsc.stdout);
    symlinkSync(join(root, 'node_modules'), join(out, 'node_modules'));
    writeFileSync(join(out, 'package.json'), '{"type":"module"}');
    // Histories with known answers written here (four kv keys; in "bad" key 3 cannot be linearized).
    for (const [name, stale] of [
      ['ok', null],
      ['bad', '3'],
    ] as const)
      writeFileSync(
        join(out, `${name}.jsonl`),
        `${kvHistory(stale)
          .map((e) => JSON.stringify(e))
          .join('\n')}\n`,
      );
    const script = join(out, 'run.mjs');
    writeFileSync(
      script,
      `import { checkOperations } from './checkers/linearizability/check.js';
import { createModel } from './checkers/linearizability/models/index.js';
import { loadHistory } from './src/core/history/read.js';
import { pairEvents } from './src/core/history/pair.js';
const res = {};
for (const name of ['ok', 'bad']) {
  const ops = pairEvents(await loadHistory(${JSON.stringify(out)} + '/' + name + '.jsonl')).ops;
  const o = await checkOperations(createModel('kv'), ops, { workers: 2, parallelThreshold: 0 });
  res[name] = { valid: o.valid, workers: o.workers };
}
console.log(JSON.stringify(res));`,
    );
    const run = await execa('node', [script], { reject: false });
    t.is(run.exitCode, 0, run.stderr);
    t.deepEqual(JSON.parse(run.stdout), {
      ok: { valid: true, workers: 2 },
      bad: { valid: false, workers: 2 },
    });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
