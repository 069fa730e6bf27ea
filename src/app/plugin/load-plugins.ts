import { existsSync } from 'node:fs';
import { extname, isAbsolute, join, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { models } from '../../../checkers/linearizability/models/registry.ts';
import { checkers } from '../../../checkers/registry.ts';
import { nemeses } from '../../../nemeses/registry.ts';
import { topologies } from '../../../nemeses/topology.ts';
import { shellQuote } from '../../core/control/quote.ts';
import { errorMessage, UserError } from '../../core/util/errors.ts';
import { packageRoot } from '../../core/util/package-info.ts';
import type { Registry } from '../../core/util/registry.ts';
import { clients } from '../../lib/clients/registry.ts';
import { type DaemonDescription, daemonDatabaseDefinition } from '../../lib/databases/daemon-db.ts';
import { readDaemonDescription } from '../../lib/databases/daemon-file.ts';
import { databases } from '../../lib/databases/registry.ts';
import { workloads } from '../../lib/workloads/index.ts';
import type { Plugin } from './define.ts';
import { moduleIdentity, trustCommandLinePlugin } from './trust.ts';

/**
 * Loads plugin modules (`--plugin PATH`, `module:` in a plan binding) and registers what they define
 * into the registries, with the module's path as the origin. A module is `.ts` (loaded through tsx,
 * imported lazily: only TypeScript plugins need it), `.js` or `.mjs`, exporting a plugin as its default
 * export or as `plugin`. A module that cannot be loaded, exports the wrong shape or registers a name
 * that is taken is bad input (exit 254) naming the module and the reason. Loading the same module
 * twice registers it once.
 */
const loaded = new Map<string, Plugin>();

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts']);
const JAVASCRIPT = new Set(['.js', '.mjs', '.cjs']);

const fn = z.custom<(...a: never[]) => unknown>((v) => typeof v === 'function', 'must be a function');
const named = z.looseObject({ name: z.string().min(1) });
const pluginShape = z.strictObject({
  name: z.string().optional(),
  databases: z.array(named.extend({ create: fn, defaultClient: z.string() })).optional(),
  clients: z.array(named.extend({ create: fn, workloads: z.array(z.string()) })).optional(),
  workloads: z.array(named.extend({ create: fn, ops: z.array(z.string()) })).optional(),
  checkers: z.array(named.extend({ load: fn })).optional(),
  nemeses: z
    .array(z.looseObject({ kind: z.string().min(1), load: fn, actions: z.array(z.unknown()) }))
    .optional(),
  models: z.array(named.extend({ create: fn, ops: z.array(z.string()) })).optional(),
  topologies: z.array(named.extend({ grudge: fn })).optional(),
});

/** Load one plugin module (relative paths from `baseDir`); returns what it registered. */
export { readDaemonDescription };

export async function loadPlugin(path: string, baseDir: string = process.cwd()): Promise<Plugin> {
  const file = isAbsolute(path) ? path : resolve(baseDir, path);
  const cached = loaded.get(file);
  if (cached) return cached;
  if (!existsSync(file)) throw new UserError(`${path}: plugin module not found (${file})`);
  const ext = extname(file).toLowerCase();
  let plugin: Plugin;
  if (ext === '.yaml' || ext === '.yml') {
    plugin = { name: file, databases: [daemonDatabaseDefinition(readDaemonDescription(file))] };
  } else if (TYPESCRIPT.has(ext) || JAVASCRIPT.has(ext)) {
    plugin = pluginExport(file, await importModule(file, TYPESCRIPT.has(ext)));
  } else throw new UserError(`${path}: a plugin is a .ts, .js or .mjs module`);
  register(file, plugin);
  loaded.set(file, plugin);
  return plugin;
}

/**
 * A module the operator named on the command line (`--plugin`, or `plugins` of the API's runTest): loaded
 * and recorded as trusted, so a plan binding naming the same file uses it without importing anything.
 */
export async function loadCommandLinePlugin(path: string): Promise<Plugin> {
  const plugin = await loadPlugin(path);
  trustCommandLinePlugin(moduleIdentity(path, process.cwd()));
  return plugin;
}

let tsxRegistered = false;

async function importModule(file: string, typescript: boolean): Promise<Record<string, unknown>> {
  // From the TypeScript sources tsx is already in place; the compiled CLI loads it for .ts plugins only.
  if (typescript && !import.meta.url.endsWith('.ts') && !tsxRegistered) {
    let api: { register: () => unknown };
    try {
      api = (await import('tsx/esm/api')) as { register: () => unknown };
    } catch {
      throw new UserError(
        `${file}: a TypeScript plugin needs tsx at run time (npm install tsx), or compile it to .js`,
      );
    }
    api.register();
    tsxRegistered = true;
  }
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    const why = firstLine(errorMessage(err));
    const missing = /^Cannot find package '([^']+)' imported from/.exec(why)?.[1];
    if (missing)
      throw new UserError(`${file}: cannot load the plugin: ${missingPackage(file, missing)}`, {
        cause: err,
      });
    const hint = /require\(\) ES Module|Cannot use import statement outside a module/.test(why)
      ? ' (a TypeScript plugin outside a package with "type": "module" is read as CommonJS: add it to its package.json, or name the file .mts)'
      : '';
    throw new UserError(`${file}: cannot load the plugin: ${why}${hint}`, { cause: err });
  }
}

function pluginExport(file: string, mod: Record<string, unknown>): Plugin {
  const candidate = mod.default ?? mod.plugin;
  if (candidate === undefined)
    throw new UserError(
      `${file}: exports no plugin (export default definePlugin({ … }), or export const plugin)`,
    );
  const r = pluginShape.safeParse(candidate);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'the export';
    throw new UserError(`${file}: not a faultline plugin: ${where}: ${issue?.message ?? 'wrong shape'}`);
  }
  return candidate as Plugin;
}

function register(file: string, p: Plugin): void {
  const add = <T>(registry: Registry<T>, items: readonly T[] | undefined, nameOf: (t: T) => string) => {
    for (const item of items ?? []) {
      try {
        registry.register(nameOf(item), item, file);
      } catch (err) {
        throw new UserError(`${file}: ${errorMessage(err)}`);
      }
    }
  };
  add(databases, p.databases, (d) => d.name);
  add(clients, p.clients, (c) => c.name);
  add(workloads, p.workloads, (w) => w.name);
  add(checkers, p.checkers, (c) => c.name);
  add(nemeses, p.nemeses, (n) => n.kind);
  add(models, p.models, (m) => m.name);
  add(topologies, p.topologies, (t) => t.name);
}

/**
 * A package the plugin imports is not installed: say which and the command that installs it. The
 * plugins shipped in examples/ are npm workspaces of a checkout (`npm ci` at its root installs them
 * all); in an installed faultline their packages are optional dependencies, and anywhere else the
 * plugin's own project installs them.
 */
function missingPackage(file: string, pkg: string): string {
  const name = pkg.startsWith('@') ? pkg.split('/').slice(0, 2).join('/') : (pkg.split('/')[0] as string);
  const inCheckout =
    file.startsWith(join(packageRoot, 'examples') + sep) &&
    existsSync(join(packageRoot, 'package-lock.json'));
  const command = inCheckout
    ? `cd ${shellQuote(packageRoot)} && npm ci`
    : name === 'faultline'
      ? 'npm install faultline'
      : `npm install ${name}`;
  return `the package "${name}" is not installed (install it: ${command})`;
}

function firstLine(s: string): string {
  return s.split('\n')[0] as string;
}

const daemons = new Map<string, string>();

/**
 * Register a daemon described in a plan binding (`daemon:` inline, or a YAML file relative to the plan).
 * The same description from the same plan registers once; another one under a taken name is refused.
 */
export function registerDaemon(description: DaemonDescription, origin: string): void {
  const key = `${origin}#${description.name}`;
  const text = JSON.stringify(description);
  if (daemons.get(key) === text) return;
  try {
    databases.register(description.name, daemonDatabaseDefinition(description), origin);
  } catch (err) {
    throw new UserError(`${origin}: ${errorMessage(err)}`);
  }
  daemons.set(key, text);
}
