import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import ts from 'typescript';

/**
 * The layers, enforced (docs/development.md draws them): core (src/core) ← libraries (nemeses/, checkers/,
 * src/lib) ← application (src/app) ← api (src/index.ts, src/api/). An import may only point to its own
 * layer or one below; a package the application alone may use (the command-line parser, the plugin
 * loader) is refused below it. Inside a layer the folders have an order too (FOLDER_ORDER): an import
 * from one folder to another goes down that order, so no two folders can need each other. No file may
 * reach itself through imports (type-only and dynamic imports count: a cycle of types is still a cycle a
 * reader has to untangle), and no folder may either.
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

/**
 * The folders of each layer, lowest first: a folder may import only the folders listed before it in its
 * own layer (and any folder of a lower layer). `checkers/` and `nemeses/` are one library each (a registry
 * at their top imports the definitions in their sub-folders); a file directly under src/lib is a folder of
 * its own.
 */
const FOLDER_ORDER: Record<Layer, readonly string[]> = {
  core: ['src/core/util', 'src/core/history', 'src/core/generator', 'src/core/control', 'src/core/database'],
  library: [
    'nemeses',
    'checkers',
    'src/lib/workloads',
    'src/lib/clusters',
    'src/lib/databases',
    'src/lib/clients',
    'src/lib/database-factory.ts',
  ],
  application: [
    'src/app/plugin',
    'src/app/plan',
    'src/app/verdict',
    'src/app/report',
    'src/app/store',
    'src/app/test',
    'src/app/run',
    'src/app/author',
    'src/app/cli',
  ],
  api: ['api'],
};

/** The folder a file belongs to, in FOLDER_ORDER's terms. */
function folderOf(file: string): string | null {
  const parts = file.split('/');
  if (parts[0] === 'checkers' || parts[0] === 'nemeses') return parts[0];
  if (file === 'src/index.ts' || parts[1] === 'api') return 'api';
  if (parts[0] === 'src' && parts.length >= 3) return parts.slice(0, 3).join('/');
  return null;
}

/**
 * Packages only some layers may import: the lowest layer allowed. A package not listed here (zod, yaml,
 * pino, ssh2, …) may be used from the core up.
 */
const PACKAGE_LAYER: Record<string, Layer> = {
  commander: 'application',
  tsx: 'application',
  ioredis: 'library',
  pg: 'library',
  mariadb: 'library',
  nats: 'library',
  amqplib: 'library',
  'node-zookeeper-client': 'library',
};

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const rel = `${dir}/${name}`;
    if (statSync(join(root, rel)).isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.ts$/.test(name) && !name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

function specifiersOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
  return info.importedFiles.map((i) => i.fileName);
}

/** `tsx/esm/api` → `tsx`, `@scope/pkg/x` → `@scope/pkg`; null for relative imports and Node's own modules. */
function packageOf(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
  return builtinModules.includes(name) ? null : name;
}

type Graph = Map<string, string[]>;

const files = ['src', 'checkers', 'nemeses'].flatMap(sourceFiles);
const specifiers = new Map(files.map((f) => [f, specifiersOf(f)]));
const graph: Graph = new Map(
  files.map((f) => [
    f,
    (specifiers.get(f) ?? [])
      .filter((s) => s.startsWith('.'))
      .map((s) => relative(root, resolve(dirname(join(root, f)), s))),
  ]),
);
const packages = new Map(files.map((f) => [f, (specifiers.get(f) ?? []).flatMap((s) => packageOf(s) ?? [])]));

/** Imports that point to a higher layer, as "from (layer) → to (layer)". */
function upwardImports(g: Graph): string[] {
  const upward: string[] = [];
  for (const [from, targets] of g) {
    const a = layerOf(from);
    for (const to of targets) {
      const b = layerOf(to);
      if (a && b && LAYERS.indexOf(b) > LAYERS.indexOf(a)) upward.push(`${from} (${a}) → ${to} (${b})`);
    }
  }
  return upward;
}

/** Package imports below the lowest layer PACKAGE_LAYER allows them. */
function upwardPackages(pkgs: Map<string, string[]>): string[] {
  const upward: string[] = [];
  for (const [from, names] of pkgs) {
    const a = layerOf(from);
    for (const name of names) {
      const lowest = PACKAGE_LAYER[name];
      if (a && lowest && LAYERS.indexOf(a) < LAYERS.indexOf(lowest))
        upward.push(`${from} (${a}) → ${name} (${lowest} and above)`);
    }
  }
  return upward;
}

/** The graph between folders: an edge for every import from a file of one folder to a file of another. */
function folderGraph(g: Graph): Graph {
  const edges = new Map<string, Set<string>>();
  for (const [from, targets] of g) {
    const a = folderOf(from);
    if (!a) continue;
    const set = edges.get(a) ?? new Set<string>();
    edges.set(a, set);
    for (const to of targets) {
      const b = folderOf(to);
      if (b && b !== a) set.add(b);
    }
  }
  return new Map([...edges].map(([k, v]) => [k, [...v].sort()]));
}

/** Imports between two folders of one layer that go up FOLDER_ORDER (or touch a folder it does not list). */
function orderViolations(folders: Graph): string[] {
  const bad: string[] = [];
  for (const [from, targets] of folders) {
    const a = layerOf(from === 'api' ? 'src/index.ts' : `${from}/`);
    for (const to of targets) {
      const b = layerOf(to === 'api' ? 'src/index.ts' : `${to}/`);
      if (!a || a !== b) continue;
      const order = FOLDER_ORDER[a];
      if (order.indexOf(to) < 0 || order.indexOf(from) < 0 || order.indexOf(to) > order.indexOf(from))
        bad.push(`${from} → ${to} (${a}: ${order.join(' ← ')})`);
    }
  }
  return bad;
}

/** Tarjan's strongly connected components; any component of two or more nodes is a cycle. */
function cycles(g: Graph): string[] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of g.get(v) ?? []) {
      if (!g.has(w)) continue;
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
      if (scc.length > 1) found.push(scc.sort());
    }
  };
  for (const v of g.keys()) if (!idx.has(v)) visit(v);
  return found.map((c) => c.join(' ↔ '));
}

test('every source file belongs to a layer and a folder of its order', (t) => {
  const stray = files.filter((f) => layerOf(f) === null);
  t.deepEqual(
    stray,
    [],
    `files outside src/core, src/lib, src/app, checkers/, nemeses/: ${stray.join(', ')}`,
  );
  const unplaced = [
    ...new Set(
      files.flatMap((f) => {
        const layer = layerOf(f);
        const folder = folderOf(f);
        return layer && folder && FOLDER_ORDER[layer].includes(folder) ? [] : [folder ?? f];
      }),
    ),
  ];
  t.deepEqual(unplaced, [], 'a new folder takes its place in FOLDER_ORDER (and in docs/development.md)');
});

test('no import points to a higher layer', (t) => {
  t.deepEqual(upwardImports(graph), []);
});

test('no package is imported below the layer it belongs to', (t) => {
  t.deepEqual(upwardPackages(packages), []);
});

test('every package a source imports is a dependency of the package', (t) => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  const declared = new Set([
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.optionalDependencies ?? {}),
    // Loaded only when installed: the plugin loader needs it for a .ts plugin and says so when absent.
    'tsx',
  ]);
  const undeclared = [...packages].flatMap(([from, names]) =>
    names.filter((n) => !declared.has(n)).map((n) => `${from} → ${n}`),
  );
  t.deepEqual(undeclared, []);
});

test('every relative import names a file that exists', (t) => {
  const missing: string[] = [];
  for (const [from, targets] of graph)
    for (const to of targets) if (!graph.has(to)) missing.push(`${from} → ${to}`);
  t.deepEqual(missing, []);
});

test('no import cycles between files', (t) => {
  t.deepEqual(cycles(graph), []);
});

test('no import cycles between folders', (t) => {
  t.deepEqual(cycles(folderGraph(graph)), []);
});

test('imports between folders of one layer go down its stated order', (t) => {
  t.deepEqual(orderViolations(folderGraph(graph)), []);
});

test('the checks see a violation when one exists', (t) => {
  // Guards the guards: a small tree with one of each fault, which every check must report.
  const bad: Graph = new Map([
    ['src/core/control/connect.ts', ['src/app/cli/main.ts']],
    ['src/app/cli/main.ts', []],
    ['src/lib/databases/etcd.ts', ['src/lib/clients/etcd-http.ts']],
    ['src/lib/clients/etcd-http.ts', []],
    ['src/lib/clients/registry.ts', ['src/lib/databases/types.ts']],
    ['src/lib/databases/types.ts', []],
    ['src/app/plan/check-plan.ts', ['src/app/verdict/expectation.ts']],
    ['src/app/verdict/expectation.ts', []],
  ]);
  t.deepEqual(upwardImports(bad), ['src/core/control/connect.ts (core) → src/app/cli/main.ts (application)']);
  t.deepEqual(upwardPackages(new Map([['src/core/control/ssh-cli-options.ts', ['commander', 'zod']]])), [
    'src/core/control/ssh-cli-options.ts (core) → commander (application and above)',
  ]);
  t.deepEqual(cycles(folderGraph(bad)), ['src/lib/clients ↔ src/lib/databases']);
  t.deepEqual(
    orderViolations(folderGraph(bad)).map((v) => v.split(' (')[0]),
    ['src/lib/databases → src/lib/clients', 'src/app/plan → src/app/verdict'],
  );
  t.is(layerOf('src/elsewhere.ts'), null);
  t.is(folderOf('checkers/elle/graph.ts'), 'checkers');
  t.is(folderOf('src/lib/database-factory.ts'), 'src/lib/database-factory.ts');
});
