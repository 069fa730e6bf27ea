import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import ts from 'typescript';

/**
 * The three layers, enforced: core (src/core: history, control, generator, util) ← libraries
 * (src/lib, checkers/, nemeses/) ← application (src/app), with the public API (src/index.ts) on top.
 * An import may only point to its own layer or one below, and no file may reach itself through imports
 * (type-only and dynamic imports count: a cycle of types is still a cycle a reader has to untangle).
 */
const root = fileURLToPath(new URL('../', import.meta.url));
const LAYERS = ['core', 'library', 'application', 'api'] as const;
type Layer = (typeof LAYERS)[number];

function layerOf(file: string): Layer | null {
  if (file.startsWith('src/core/')) return 'core';
  if (file.startsWith('src/lib/') || file.startsWith('checkers/') || file.startsWith('nemeses/'))
    return 'library';
  if (file.startsWith('src/app/')) return 'application';
  if (file === 'src/index.ts' || file.startsWith('src/api/')) return 'api';
  return null;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const rel = `${dir}/${name}`;
    if (statSync(join(root, rel)).isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.ts$/.test(name) && !name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
  return info.importedFiles
    .map((i) => i.fileName)
    .filter((s) => s.startsWith('.'))
    .map((s) => relative(root, resolve(dirname(join(root, file)), s)));
}

const files = ['src', 'checkers', 'nemeses'].flatMap(sourceFiles);
const graph = new Map(files.map((f) => [f, importsOf(f)]));

test('every source file belongs to a layer', (t) => {
  const stray = files.filter((f) => layerOf(f) === null);
  t.deepEqual(
    stray,
    [],
    `files outside src/core, src/lib, src/app, checkers/, nemeses/: ${stray.join(', ')}`,
  );
});

test('no import points to a higher layer', (t) => {
  const upward: string[] = [];
  for (const [from, targets] of graph) {
    const a = layerOf(from);
    for (const to of targets) {
      const b = layerOf(to);
      if (a && b && LAYERS.indexOf(b) > LAYERS.indexOf(a)) upward.push(`${from} (${a}) → ${to} (${b})`);
    }
  }
  t.deepEqual(upward, []);
});

test('every relative import names a file that exists', (t) => {
  const missing: string[] = [];
  for (const [from, targets] of graph)
    for (const to of targets) if (!graph.has(to)) missing.push(`${from} → ${to}`);
  t.deepEqual(missing, []);
});

test('no import cycles', (t) => {
  // Tarjan's strongly connected components; any component of two or more files is a cycle.
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) cycles.push(scc.sort());
    }
  };
  for (const f of graph.keys()) if (!idx.has(f)) visit(f);
  t.deepEqual(
    cycles.map((c) => c.join(' ↔ ')),
    [],
  );
});

test('the layer rule sees a violation when one exists', (t) => {
  // Guards the guard: the classifier must put a core file below an application file.
  t.true(
    LAYERS.indexOf(layerOf('src/app/cli/main.ts') as Layer) >
      LAYERS.indexOf(layerOf('src/core/util/log.ts') as Layer),
  );
  t.is(layerOf('src/elsewhere.ts'), null);
});
