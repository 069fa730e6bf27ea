import type { Model } from '../../../checkers/linearizability/model.ts';
import type { ModelDefinition } from '../../../checkers/linearizability/models/registry.ts';
import type { CheckerDefinition } from '../../../checkers/registry.ts';
import type { Checker } from '../../../checkers/types.ts';
import { type NemesisSpec, nemesisDefinition } from '../../../nemeses/generic.ts';
import type { TopologyDefinition } from '../../../nemeses/topology.ts';
import type { NemesisDefinition } from '../../../nemeses/types.ts';
import type { OptionsSchema } from '../../core/util/options.ts';
import type { ClientContext, ClientDefinition } from '../../lib/clients/registry.ts';
import type { Client } from '../../lib/clients/types.ts';
import { daemonDatabaseDefinition, parseDaemonDescription } from '../../lib/databases/daemon-db.ts';
import { readDaemonDescription } from '../../lib/databases/daemon-file.ts';
import type { DatabaseDefinition } from '../../lib/databases/registry.ts';
import type { Database } from '../../lib/databases/types.ts';
import type { WorkloadDefinition } from '../../lib/workloads/index.ts';
import type { Workload, WorkloadOptions } from '../../lib/workloads/types.ts';

/**
 * The `define*` helpers a plugin is written with. Each checks its input's shape where a mistake would
 * otherwise surface late, fills in what can be defaulted, and returns the definition the registries
 * hold. A plugin module exports `definePlugin({ … })` as its default export (or as `plugin`).
 */

export interface DatabaseInput {
  name: string;
  summary?: string;
  /** The client used when the binding names none. */
  defaultClient: string;
  options?: OptionsSchema;
  staleReads?: Record<string, unknown>;
  binary?: string;
  create(options: Record<string, unknown>): Database | Promise<Database>;
}

export function defineDatabase(d: DatabaseInput): DatabaseDefinition {
  need(d, 'database', ['name', 'defaultClient'], ['create']);
  return { summary: `database ${d.name}`, ...d };
}

export interface ClientInput {
  name: string;
  summary?: string;
  workloads: readonly string[];
  /** Does the client ever repeat an op on its own (a library retry)? Default: unknown (null). */
  hiddenRetries?: boolean | null;
  options?: OptionsSchema;
  /**
   * `client-address`: the client connects only where `db.clientAddress(ctx, node)` says, so faultline
   * can point it at its proxy (proxy faults, client-only runs). Default: unknown (proxy faults refused).
   */
  endpoints?: 'client-address';
  create(c: ClientContext): Client | Promise<Client>;
}

export function defineClient(c: ClientInput): ClientDefinition {
  need(c, 'client', ['name'], ['create']);
  if (!Array.isArray(c.workloads) || c.workloads.length === 0)
    throw new TypeError(`client ${c.name}: name the workloads it implements (workloads: [...])`);
  return { summary: `client ${c.name}`, hiddenRetries: null, ...c };
}

export interface WorkloadInput {
  name: string;
  summary?: string;
  /** The op functions (`f`) its clients are asked to perform. */
  ops: readonly string[];
  create(o: WorkloadOptions): Workload;
}

export function defineWorkload(w: WorkloadInput): WorkloadDefinition {
  need(w, 'workload', ['name'], ['create']);
  return { summary: `workload ${w.name}`, ...w };
}

export interface CheckerInput {
  name: string;
  summary?: string;
  checker: Checker<never> | Checker;
  schema?: OptionsSchema;
  /** The op functions the checker reads (plan check refuses it on a workload that has none). */
  consumes?: readonly string[] | ((options: Record<string, unknown>) => readonly string[] | null);
}

export function defineChecker(c: CheckerInput): CheckerDefinition {
  need(c, 'checker', ['name'], []);
  if (!c.checker || typeof c.checker.check !== 'function')
    throw new TypeError(`checker ${c.name}: give { checker: { name, check(ops, options, ctx) } }`);
  const consumes = c.consumes;
  return {
    name: c.name,
    summary: c.summary ?? `checker ${c.name}`,
    ...(consumes && { consumes: typeof consumes === 'function' ? consumes : () => consumes }),
    load: async () => ({ checker: c.checker as Checker<never>, ...(c.schema && { schema: c.schema }) }),
  };
}

export function defineNemesis(n: NemesisSpec): NemesisDefinition {
  need(n, 'nemesis', ['kind'], []);
  return nemesisDefinition(n);
}

export interface ModelInput {
  name: string;
  summary?: string;
  ops: readonly string[];
  create(options: { initialValue?: unknown }): Model;
}

export function defineModel(m: ModelInput): ModelDefinition {
  need(m, 'model', ['name'], ['create']);
  return { ...m };
}

export function defineTopology(t: TopologyDefinition): TopologyDefinition {
  need(t, 'topology', ['name'], ['grudge']);
  return t;
}

export interface Plugin {
  /** Shown in `check --list` and errors; defaults to the module path. */
  name?: string;
  databases?: readonly DatabaseDefinition[];
  clients?: readonly ClientDefinition[];
  workloads?: readonly WorkloadDefinition[];
  checkers?: readonly CheckerDefinition[];
  nemeses?: readonly NemesisDefinition[];
  models?: readonly ModelDefinition[];
  topologies?: readonly TopologyDefinition[];
}

export function definePlugin(p: Plugin): Plugin {
  return p;
}

function need(o: object, what: string, strings: string[], functions: string[]): void {
  const r = o as Record<string, unknown>;
  for (const k of strings)
    if (typeof r[k] !== 'string' || r[k] === '')
      throw new TypeError(`${what}: "${k}" must be a non-empty string`);
  for (const k of functions)
    if (typeof r[k] !== 'function')
      throw new TypeError(`${what} ${String(r.name ?? r.kind)}: "${k}" must be a function`);
}

/**
 * A database from a daemon description (an object, or the path of a YAML file): see
 * src/lib/databases/daemon-db.ts for the format. Install, start, kill, pause, restart, the clock
 * wrapper, logs and teardown come with it.
 */
export function defineDaemonDatabase(description: Record<string, unknown> | string): DatabaseDefinition {
  const d =
    typeof description === 'string'
      ? readDaemonDescription(description)
      : parseDaemonDescription(description, `daemon ${String(description.name ?? '')}`.trim());
  return daemonDatabaseDefinition(d);
}
