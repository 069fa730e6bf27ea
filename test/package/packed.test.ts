import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { execa } from 'execa';

/**
 * The published package, from outside: `npm pack` (which builds dist/ through prepack) in a copy of the
 * checkout, install the tarball in an empty project, compile the example plugin against it with tsc
 * (library types checked, skipLibCheck off), and import it from plain Node.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const examplePlugin = join(root, 'examples/memcached/plugin.ts');

function copyCheckout(to: string): void {
  const files = execFileSync('git', ['-C', root, 'ls-files', '-co', '--exclude-standard'], {
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f !== '' && !f.includes('test-sessions/') && existsSync(join(root, f)));
  for (const f of files) {
    mkdirSync(dirname(join(to, f)), { recursive: true });
    cpSync(join(root, f), join(to, f));
  }
  symlinkSync(join(root, 'node_modules'), join(to, 'node_modules'));
}

test('npm pack ships dist/, types, README and LICENSE; an example plugin compiles against it; plain Node imports it', async (t) => {
  t.timeout(8 * 60_000);
  const work = mkdtempSync(join(tmpdir(), 'faultline-pack-'));
  try {
    const checkout = join(work, 'checkout');
    copyCheckout(checkout);
    const pack = await execa('npm', ['pack', '--pack-destination', work, '--json'], {
      cwd: checkout,
      reject: false,
    });
    t.is(pack.exitCode, 0, pack.stderr);
    const [info] = JSON.parse(pack.stdout) as [{ filename: string; files: { path: string }[] }];
    const files = info.files.map((f) => f.path);
    for (const f of ['dist/src/index.js', 'dist/src/index.d.ts', 'README.md', 'LICENSE', 'bin/faultline.js'])
      t.true(files.includes(f), `the package contains ${f}`);
    // The plans' plugins ship beside them (plans/x.md loads ../examples/…/plugin.ts).
    for (const f of [
      'plans/zookeeper-reads.md',
      'examples/zookeeper/plugin.ts',
      'examples/nats/plugin.ts',
      'examples/sql/plugin.ts',
      'examples/memcached/plugin.ts',
      'examples/memcached/memcached-register.md',
    ])
      t.true(files.includes(f), `the package contains ${f}`);
    t.false(
      files.some((f) => f.includes('node_modules/') || f.includes('test-sessions/')),
      'no installed modules, no sessions',
    );
    t.false(
      files.some((f) => f.startsWith('test/') || (f.startsWith('src/') && f.endsWith('.ts'))),
      'no tests, no raw sources',
    );
    const manifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, unknown>
    >;
    t.false('tsx' in (manifest.dependencies ?? {}), 'tsx is not a run-time dependency');
    t.false('execa' in (manifest.dependencies ?? {}), 'execa is not a run-time dependency');

    const consumer = join(work, 'consumer');
    mkdirSync(consumer);
    writeFileSync(join(consumer, 'package.json'), '{"name":"consumer","private":true,"type":"module"}');
    const install = await execa(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        join(work, info.filename),
      ],
      { cwd: consumer, reject: false },
    );
    t.is(install.exitCode, 0, install.stderr);
    // A TypeScript user brings Node's types; faultline's own type dependencies must not be needed.
    mkdirSync(join(consumer, 'node_modules/@types'), { recursive: true });
    // (an optional dependency of the example plugins may have brought them already)
    if (!existsSync(join(consumer, 'node_modules/@types/node')))
      symlinkSync(join(root, 'node_modules/@types/node'), join(consumer, 'node_modules/@types/node'));
    const sources = ['plugin.ts'];
    if (existsSync(examplePlugin)) {
      cpSync(dirname(examplePlugin), join(consumer, 'example'), {
        recursive: true,
        filter: (p) => !p.includes('node_modules'),
      });
      sources.push('example/plugin.ts');
    }
    writeFileSync(
      join(consumer, 'plugin.ts'),
      `import { type Client, type Completion, check, defineClient, defineDatabase, definePlugin } from 'faultline';
import { shellQuote } from 'faultline/control';
import { repeat } from 'faultline/generators';
import { type ReportJson } from 'faultline/report';
export const everyOp = repeat({ f: 'read', value: null });
export type Report = ReportJson;
class Echo implements Client {
  async open(_node: string): Promise<Client> { return this; }
  async setup(): Promise<void> {}
  async invoke(op: { f: string; value: unknown }): Promise<Completion> { return { type: 'ok', value: op.value }; }
  async teardown(): Promise<void> {}
  async close(): Promise<void> {}
}
export default definePlugin({
  databases: [defineDatabase({ name: 'echo', defaultClient: 'echo', create: () => { throw new Error(shellQuote('x')); } })],
  clients: [defineClient({ name: 'echo', workloads: ['register'], create: () => new Echo() })],
});
export const run = () => check([], 'stats');
`,
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
        },
        files: sources,
      }),
    );
    const typecheck = await execa('node', [tsc, '-p', consumer], { reject: false });
    t.is(typecheck.exitCode, 0, typecheck.stdout + typecheck.stderr);
    const imported = await execa(
      'node',
      [
        '-e',
        "Promise.all(['faultline', 'faultline/report', 'faultline/generators'].map((p) => import(p))).then((ms) => console.log(JSON.stringify(ms.flatMap((m) => Object.keys(m)).sort())))",
      ],
      { cwd: consumer, reject: false },
    );
    t.is(imported.exitCode, 0, imported.stderr);
    const names = JSON.parse(imported.stdout) as string[];
    for (const n of [
      'defineDatabase',
      'defineClient',
      'defineWorkload',
      'defineChecker',
      'defineNemesis',
      'defineModel',
      'definePlugin',
      'runTest',
      'runPlan',
      'check',
      'loadHistory',
      'reportJsonSchema',
      'REPORT_JSON_SCHEMA_VERSION',
      'repeat',
      'eachThread',
    ])
      t.true(names.includes(n), `exports ${n}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
