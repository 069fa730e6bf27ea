import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import test from 'ava';
import { execa } from 'execa';
import { author, siblingPath } from '../../src/app/author/write.ts';
import { UserError } from '../../src/core/util/errors.ts';

const planPath = new URL('../../plans/etcd-register.md', import.meta.url).pathname;
const repo = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
const sha = createHash('sha256').update(readFileSync(planPath)).digest('hex');
const tmp = () => mkdtempSync(join(tmpdir(), 'fl-author-'));

test('writes each TypeScript scenario as a runnable module under the provenance header', async (t) => {
  const root = tmp();
  const out = await author({ plan: planPath, scenarios: [], root, mode: 'skip' });
  t.deepEqual(
    out.map((o) => [o.scenario, o.action]),
    [
      ['S1', 'written'],
      ['S2', 'written'],
      ['S3', 'written'],
    ],
  );
  const s3 = readFileSync(out[2]?.path as string, 'utf8');
  t.true(
    s3.startsWith(
      `// AUTO-GENERATED from test plan: ${relative(dirname(out[2]?.path as string), planPath)}\n`,
    ),
  );
  t.regex(s3, /Scenario: S3 serializable_reads_stay_linearizable_negative_control/);
  t.regex(s3, /Falsifies: C3/);
  t.true(s3.includes(`Plan sha256: ${sha}`));
  t.regex(s3, /REVIEW BEFORE TREATING AS A PERMANENT REGRESSION/);
  t.regex(s3, /\/\/ 1\. Workload[\s\S]*\/\/ 2\. Faults[\s\S]*\/\/ 3\. Oracle/);
  t.regex(s3, /t\.regex\(row\?\.verdict \?\? '', \/\^FAIL-\//, 'a negative control must FAIL');
  const s1 = readFileSync(out[0]?.path as string, 'utf8');
  t.regex(s1, /\^PASS-/);
  t.regex(s1, /^import \{ runPlan \} from 'faultline';$/m);
});

test('a TypeScript skeleton imports only the public API and names the plan relative to itself', async (t) => {
  t.timeout(5 * 60_000, 'tsc over the public API on a loaded machine');
  const root = tmp();
  const plan = join(root, 'plans', 'etcd-register.md');
  mkdirSync(dirname(plan));
  cpSync(planPath, plan);
  const [s1] = await author({ plan, scenarios: ['S1'], root, mode: 'skip' });
  const file = s1?.path as string;
  const text = readFileSync(file, 'utf8');
  t.false(text.includes(repo), 'no path of this checkout');
  t.false(text.includes(root), 'no absolute path of the project');
  const imports = [...text.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
  t.deepEqual(imports, ['node:url', 'ava', 'faultline']);
  const rel = /new URL\(("[^"]+")/.exec(text)?.[1];
  t.truthy(rel, 'the plan is a URL relative to the module');
  t.is(rel, '"../../plans/etcd-register.md"');
  t.is(fileURLToPath(new URL(JSON.parse(rel as string) as string, pathToFileURL(file))), plan);
  // It compiles against 'faultline' (the package's public entry point) and nothing else of it.
  writeFileSync(join(root, 'package.json'), '{"type":"module","private":true}');
  mkdirSync(join(root, 'node_modules'));
  symlinkSync(join(repo, 'node_modules/ava'), join(root, 'node_modules/ava'));
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        allowImportingTsExtensions: true,
        types: ['node'],
        typeRoots: [join(repo, 'node_modules/@types')],
        paths: { faultline: [join(repo, 'src/index.ts')] },
      },
      files: [file],
    }),
  );
  const tsc = await execa('node', [join(repo, 'node_modules/typescript/bin/tsc'), '-p', root], {
    reject: false,
  });
  t.is(tsc.exitCode, 0, tsc.stdout + tsc.stderr);
});

test('never overwrites silently: skip, --sibling, --overwrite', async (t) => {
  const root = tmp();
  const [first] = await author({ plan: planPath, scenarios: ['S1'], root, mode: 'skip' });
  const target = first?.path as string;
  writeFileSync(target, 'hand-edited\n');
  const [skipped] = await author({ plan: planPath, scenarios: ['s1'], root, mode: 'skip' });
  t.is(skipped?.action, 'skipped');
  t.is(readFileSync(target, 'utf8'), 'hand-edited\n');
  const [asked] = await author({
    plan: planPath,
    scenarios: ['S1'],
    root,
    mode: 'ask',
    ask: async () => 'skip',
  });
  t.is(asked?.action, 'skipped');
  const [sib] = await author({ plan: planPath, scenarios: ['S1'], root, mode: 'sibling' });
  t.is(sib?.action, 'sibling');
  t.is(sib?.path, siblingPath(target));
  t.true(sib?.path?.endsWith('.test.new.ts'));
  t.is(readFileSync(target, 'utf8'), 'hand-edited\n');
  const [over] = await author({ plan: planPath, scenarios: ['S1'], root, mode: 'overwrite' });
  t.is(over?.action, 'overwritten');
  t.regex(readFileSync(target, 'utf8'), /^\/\/ AUTO-GENERATED/);
});

test('refuses a plan skeleton without the AUTO-GENERATED header; writes one that has it', async (t) => {
  const root = tmp();
  const text = readFileSync(planPath, 'utf8')
    .replace(
      '- **Target test file:** test/auto/s2-linearizable-register-under-clock-skew.test.ts\n- **Skeleton language:** typescript',
      '- **Target test file:** tests/auto/test_clock.py\n- **Skeleton language:** python\n- **Skeleton:**\n\n```python\ndef test_clock():\n    pass  # 1. Workload 2. Faults 3. Oracle\n```',
    )
    .replace(
      '- **Target test file:** test/auto/s3-serializable-reads-negative-control.test.ts\n- **Skeleton language:** typescript',
      '- **Target test file:** tests/auto/test_neg.py\n- **Skeleton language:** python\n- **Skeleton:**\n\n```python\n# AUTO-GENERATED from test plan: plans/etcd-register.md\n# Scenario: S3\n# Falsifies: C3\n# REVIEW BEFORE TREATING AS A PERMANENT REGRESSION\ndef test_neg():\n    pass  # 1. Workload 2. Faults 3. Oracle\n```',
    );
  const plan = join(root, 'plan.md');
  writeFileSync(plan, text);
  const out = await author({ plan, scenarios: ['S2', 'S3'], root, mode: 'skip' });
  t.is(out[0]?.action, 'refused');
  t.regex(out[0]?.reason ?? '', /AUTO-GENERATED/);
  t.false(existsSync(join(root, 'tests/auto/test_clock.py')));
  t.is(out[1]?.action, 'written');
  const py = readFileSync(join(root, 'tests/auto/test_neg.py'), 'utf8');
  t.true(py.startsWith('# AUTO-GENERATED from test plan: ../../plan.md\n# Scenario: S3 '));
  t.regex(py, /# Plan sha256: [0-9a-f]{64}/);
  t.regex(py, /def test_neg/);
});

test('an unknown scenario is a user error', async (t) => {
  await t.throwsAsync(author({ plan: planPath, scenarios: ['S7'], root: tmp(), mode: 'skip' }), {
    instanceOf: UserError,
  });
});
