import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { anchorOf } from '../../src/app/cli/reference.ts';
import { checkPlan } from '../../src/app/plan/check-plan.ts';
import { loadPlan } from '../../src/app/plan/load.ts';
import { formatProblem } from '../../src/app/plan/problem.ts';

/**
 * The documentation is tested like code (docs/development.md, "Documentation"):
 * - every relative link in README.md and docs/ resolves: the file exists, a #fragment names a heading;
 * - every plan in a fenced block (first line `# Test Plan: …`) passes plan check with no problem;
 * - every block marked `<!-- runnable -->` runs and exits 0, in document order, after the document's
 *   `<!-- file: NAME -->` blocks are written to its scratch directory.
 */
const root = resolve(new URL('../..', import.meta.url).pathname);
const BLOCK_TIMEOUT_MS = 150_000;

interface Block {
  line: number;
  lang: string;
  body: string;
  marker: string | null;
}

interface Doc {
  path: string;
  text: string;
  blocks: Block[];
  /** Lines outside fenced blocks, with their numbers. */
  prose: { n: number; text: string }[];
  anchors: Set<string>;
}

function markdownFiles(): string[] {
  const out = [join(root, 'README.md')];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) out.push(p);
    }
  };
  walk(join(root, 'docs'));
  return out;
}

/** Fenced blocks (with the HTML comment just before each), prose lines, and the headings' anchors. */
function parse(path: string): Doc {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const blocks: Block[] = [];
  const prose: Doc['prose'] = [];
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: { marks: string; start: number; lang: string; marker: string | null; body: string[] } | null =
    null;
  let lastComment: string | null = null;
  lines.forEach((line, i) => {
    const open = /^(`{3,})\s*([\w-]*)/.exec(line);
    if (fence) {
      if (line.trim() === fence.marks) {
        blocks.push({
          line: fence.start,
          lang: fence.lang,
          body: fence.body.join('\n'),
          marker: fence.marker,
        });
        fence = null;
      } else fence.body.push(line);
      return;
    }
    if (open) {
      fence = { marks: open[1] as string, start: i + 1, lang: open[2] ?? '', marker: lastComment, body: [] };
      lastComment = null;
      return;
    }
    prose.push({ n: i + 1, text: line });
    const comment = /^<!--\s*((?:runnable|file)\b.*?)\s*-->\s*$/.exec(line);
    if (comment) lastComment = comment[1] as string;
    else if (line.trim() !== '') lastComment = null;
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) {
      const base = anchorOf(headingText(heading[1] as string));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
  });
  return { path, text, blocks, prose, anchors };
}

/** A heading's text as rendered: links become their text, code spans and emphasis marks vanish. */
function headingText(raw: string): string {
  return raw
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/\*\*|__/g, '');
}

const docs = new Map(markdownFiles().map((p) => [p, parse(p)]));

/** Links in prose, code spans and HTML comments left out. */
function linksOf(doc: Doc): { n: number; target: string }[] {
  const out: { n: number; target: string }[] = [];
  for (const { n, text } of doc.prose) {
    if (text.trimStart().startsWith('<!--')) continue;
    const line = text.replace(/`[^`]*`/g, '');
    for (const m of line.matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)) out.push({ n, target: m[1] as string });
  }
  return out;
}

test('every relative link in README.md and docs/ resolves, #anchors included', (t) => {
  const broken: string[] = [];
  let checked = 0;
  for (const doc of docs.values()) {
    for (const { n, target } of linksOf(doc)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      checked++;
      const [file, fragment] = target.split('#', 2) as [string, string | undefined];
      const where = `${relative(root, doc.path)}:${n}: ${target}`;
      const dest = file === '' ? doc.path : resolve(dirname(doc.path), decodeURIComponent(file));
      if (!existsSync(dest)) {
        broken.push(`${where}: no such file`);
        continue;
      }
      if (fragment === undefined) continue;
      const targetDoc = docs.get(dest);
      if (!targetDoc) broken.push(`${where}: a #fragment into a file that is not Markdown`);
      else if (!targetDoc.anchors.has(fragment)) broken.push(`${where}: no heading with anchor #${fragment}`);
    }
  }
  t.log(`${checked} relative links in ${docs.size} files`);
  t.deepEqual(broken, []);
});

test('every runnable or file marker is followed by a fenced block, and runnable blocks are sh', (t) => {
  const problems: string[] = [];
  for (const doc of docs.values()) {
    const marked = doc.blocks.filter((b) => b.marker !== null).length;
    const markers = doc.prose.filter((l) => /^<!--\s*(runnable|file)\b/.test(l.text)).length;
    if (marked !== markers)
      problems.push(`${relative(root, doc.path)}: a marker is not right before a fence`);
    for (const b of doc.blocks)
      if (b.marker?.startsWith('runnable') && b.lang !== 'sh')
        problems.push(`${relative(root, doc.path)}:${b.line}: a runnable block must be \`\`\`sh`);
  }
  t.deepEqual(problems, []);
});

test('every plan in the documentation passes plan check with no problem', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-docs-plans-'));
  let plans = 0;
  for (const doc of docs.values()) {
    for (const b of doc.blocks) {
      if (!/^# Test Plan: /.test(b.body)) continue;
      plans++;
      const file = join(dir, `${plans}.md`);
      writeFileSync(file, `${b.body}\n`);
      const where = `${relative(root, doc.path)}, plan at line ${b.line}`;
      const problems = checkPlan(await loadPlan(file)).map((p) => formatProblem(where, p));
      t.deepEqual(problems, [], `${relative(root, doc.path)}:${b.line}`);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  t.true(plans > 0, 'the plan reference has a complete example');
});

test('every documentation file the program or its scripts point users to exists', (t) => {
  const sources: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (
          e.name !== 'node_modules' &&
          e.name !== 'test-sessions' &&
          (e.name !== 'store' || dir === join(root, 'src', 'app'))
        )
          walk(p);
      } else if (/\.(ts|js|mjs|sh)$/.test(e.name)) sources.push(p);
    }
  };
  for (const d of ['src', 'nemeses', 'checkers', 'bin', 'scripts', 'examples']) walk(join(root, d));
  // The toolbox scan lists paths it looks for in the system under test's repository, not faultline's docs.
  const sutPaths = join(root, 'src', 'app', 'run', 'toolbox.ts');
  const missing: string[] = [];
  let pointers = 0;
  for (const file of sources.filter((f) => f !== sutPaths)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\b(README\.md|docs\/[\w./-]+\.(?:md|png))(#[\w-]+)?/g)) {
      pointers++;
      const target = join(root, m[1] as string);
      if (!existsSync(target)) missing.push(`${relative(root, file)}: ${m[0]}`);
      else if (m[2] && !docs.get(target)?.anchors.has(m[2].slice(1)))
        missing.push(`${relative(root, file)}: ${m[0]}: no such heading`);
    }
  }
  t.log(`${pointers} pointers into the documentation`);
  t.deepEqual(missing, []);
});

/** `faultline` and `npx faultline` run this checkout from its sources; `import 'faultline'` resolves to them. */
function shimDir(dir: string): string {
  const pkg = join(dir, 'node_modules', 'faultline');
  const bin = join(dir, 'node_modules', '.bin');
  mkdirSync(pkg, { recursive: true });
  mkdirSync(bin, { recursive: true });
  // Each of the package's entry points (`faultline`, `faultline/generators` …) re-exports its source.
  const entries = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).exports as Record<
    string,
    { default?: string }
  >;
  const exportsMap: Record<string, string> = {};
  for (const [key, target] of Object.entries(entries)) {
    const file = typeof target === 'object' ? target.default : undefined;
    if (!file?.startsWith('./dist/')) continue;
    const name = key === '.' ? 'index' : key.slice(2);
    const source = join(root, file.slice('./dist/'.length).replace(/\.js$/, '.ts'));
    writeFileSync(join(pkg, `${name}.ts`), `export * from ${JSON.stringify(source)};\n`);
    exportsMap[key] = `./${name}.ts`;
  }
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({ name: 'faultline', type: 'module', exports: exportsMap }),
  );
  const wrapper = join(bin, 'faultline');
  writeFileSync(
    wrapper,
    `#!/bin/sh\nFAULTLINE_FROM_SOURCE=1 exec node ${JSON.stringify(join(root, 'bin', 'faultline.js'))} "$@"\n`,
  );
  chmodSync(wrapper, 0o755);
  return bin;
}

const isRoot = process.getuid?.() === 0;
let executed = 0;

for (const doc of docs.values()) {
  if (!doc.blocks.some((b) => b.marker?.startsWith('runnable'))) continue;
  const name = relative(root, doc.path);
  test(`runnable examples in ${name} run and exit 0`, async (t) => {
    const scratch = mkdtempSync(join(tmpdir(), 'fl-docs-'));
    const bin = shimDir(scratch);
    const clusters = new Set<string>();
    try {
      for (const b of doc.blocks) {
        const marker = b.marker ?? '';
        const file = /^file:\s*(\S+)/.exec(marker);
        if (file) {
          writeFileSync(join(scratch, file[1] as string), `${b.body}\n`);
          continue;
        }
        if (!marker.startsWith('runnable')) continue;
        const flags = new Set(
          marker
            .replace(/^runnable:?/, '')
            .trim()
            .split(/\s+/)
            .filter(Boolean),
        );
        if (flags.has('root') && !isRoot) {
          if (process.env.FAULTLINE_REQUIRE_CLUSTER === '1') t.fail(`${name}:${b.line} needs root`);
          t.log(`${name}:${b.line}: skipped, needs root (a local cluster)`);
          continue;
        }
        for (const m of b.body.matchAll(/--(?:cluster-)?name[ =](doc-[\w-]+)/g)) clusters.add(m[1] as string);
        const started = Date.now();
        const r = await execa('bash', ['-euo', 'pipefail', '-c', b.body], {
          cwd: flags.has('scratch') ? scratch : root,
          env: { FAULTLINE_FROM_SOURCE: '1', PATH: `${bin}:${process.env.PATH}` },
          reject: false,
          timeout: BLOCK_TIMEOUT_MS,
          all: true,
        });
        executed++;
        t.log(`${name}:${b.line}: exit ${r.exitCode} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        t.is(r.exitCode, 0, `${name}:${b.line}:\n${b.body}\n--- output ---\n${(r.all ?? '').slice(-3000)}`);
        if (r.exitCode !== 0) break;
      }
    } finally {
      for (const c of clusters)
        await execa('node', [join(root, 'bin', 'faultline.js'), 'cluster', 'down', '--name', c], {
          reject: false,
          env: { FAULTLINE_FROM_SOURCE: '1' },
        });
      rmSync(scratch, { recursive: true, force: true });
    }
  });
}

test.after('count the runnable examples executed', (t) => {
  t.log(`${executed} runnable documentation examples executed`);
});
