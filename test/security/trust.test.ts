import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';

/**
 * The trust model (docs/security.md "Trust model"): a plan's `module:` is code and runs only when the
 * operator names the same file with `--plugin` or passes `run --trust-plan-modules`. The canary module
 * writes a file the moment it is imported; every command that must not import it is run and the canary
 * must not exist afterwards.
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const planPath = new URL('../../plans/etcd-register.md', import.meta.url).pathname;
const run = (args: string[], cwd?: string) =>
  execa('node', [bin, ...args], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
    ...(cwd && { cwd }),
    timeout: 120_000,
  });

function sandbox(moduleRef: (dir: string) => string) {
  const dir = mkdtempSync(join(tmpdir(), 'fl-sec-trust-'));
  const canary = join(dir, 'CANARY');
  const modDir = join(dir, 'elsewhere', 'deep');
  mkdirSync(modDir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  const mod = join(modDir, 'canary.mjs');
  writeFileSync(
    mod,
    `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(canary)}, 'imported');\nexport default { name: 'canary' };\n`,
  );
  const plans = join(dir, 'plans', 'sub');
  mkdirSync(plans, { recursive: true });
  const original = readFileSync(planPath, 'utf8');
  const text = original.replace(
    '```faultline\ndb: etcd\n',
    `\`\`\`faultline\nmodule: ${moduleRef(dir)}\ndb: etcd\n`,
  );
  const plan = join(plans, 'plan.md');
  writeFileSync(plan, text);
  // An invalid plan (no oracle anywhere) naming the same module: it must not be imported either.
  const invalid = join(plans, 'invalid.md');
  writeFileSync(invalid, text.replaceAll('**Oracle:**', '**Oracle (gone):**'));
  return { dir, canary, mod, plan, invalid, text };
}

const REFS: [string, (dir: string) => string][] = [
  ['relative ../..', () => '../../elsewhere/deep/canary.mjs'],
  ['absolute', (dir) => join(dir, 'elsewhere', 'deep', 'canary.mjs')],
];

for (const [label, ref] of REFS) {
  test(`a plan's module (${label}) is never imported by plan check, plan show, author or run without opt-in`, async (t) => {
    const s = sandbox(ref);
    t.true(readFileSync(s.plan, 'utf8').includes('module: '));
    const cases: string[][] = [
      ['plan', 'check', s.plan],
      ['plan', 'check', s.invalid],
      ['plan', 'check', '--json', s.plan],
      ['plan', 'show', s.plan],
      ['author', s.plan, '--root', s.dir],
      ['run', s.plan, '--inventory', join(s.dir, 'none.yaml'), '--out', join(s.dir, 'out')],
    ];
    for (const args of cases) {
      const r = await run(args, s.dir);
      t.is(r.exitCode, 254, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      t.regex(
        r.stderr,
        /\.md:\d+: binding\.module: ".*canary\.mjs" is code and a plan cannot run code: pass --plugin/,
        args.join(' '),
      );
      t.false(existsSync(s.canary), `${args.join(' ')} imported the plan's module`);
    }
  });
}

test('the same module given with --plugin, or run --trust-plan-modules, is imported (the opt-ins work)', async (t) => {
  const s = sandbox(REFS[0]![1]);
  const viaPlugin = await run(['plan', 'check', '--plugin', s.mod, s.plan], s.dir);
  t.true(existsSync(s.canary), viaPlugin.stderr);
  t.is(viaPlugin.exitCode, 0, viaPlugin.stdout + viaPlugin.stderr);
  const s2 = sandbox(REFS[0]![1]);
  const trusted = await run(
    [
      'run',
      s2.plan,
      '--trust-plan-modules',
      '--inventory',
      join(s2.dir, 'none.yaml'),
      '--out',
      join(s2.dir, 'o'),
    ],
    s2.dir,
  );
  t.true(existsSync(s2.canary), trusted.stderr);
  // --plugin with a different file does not vouch for the plan's module.
  const s3 = sandbox(REFS[0]![1]);
  const other = join(s3.dir, 'other.mjs');
  writeFileSync(other, 'export default { name: "other" };\n');
  const r = await run(['plan', 'check', '--plugin', other, s3.plan], s3.dir);
  t.is(r.exitCode, 254, r.stderr);
  t.false(existsSync(s3.canary));
});
