/**
 * faultline's public API: what a plugin or a program built on faultline imports from 'faultline'.
 * Everything else is internal and may change between versions.
 *
 *   import { defineDatabase, defineClient, definePlugin } from 'faultline';
 *
 * - Extending faultline: `definePlugin` with `defineDatabase`, `defineClient`, `defineWorkload`,
 *   `defineChecker`, `defineNemesis`, `defineModel`, `defineTopology`, or no code at all with
 *   `defineDaemonDatabase` (a process with a port, described by a YAML file or an object).
 * - Running: `runPlan` (`faultline run PLAN`), `runTest` (`faultline test`), `check` (`faultline check`),
 *   `loadHistory` (every history format faultline reads).
 * - The protocols a plugin implements (Database and its optional capabilities, Client, Workload, Checker,
 *   Nemesis, Model) and the values they exchange; the errors a plugin throws or catches.
 *
 * The rest is in subpaths (docs/plugins.md): `faultline/generators` (generator combinators),
 * `faultline/control` (running commands on the nodes), `faultline/database` (the capability protocols'
 * parts), `faultline/clients` (helpers for a client of a built-in workload), `faultline/checkers`,
 * `faultline/nemeses`, `faultline/history` and `faultline/report`.
 */

export type { Model } from '../checkers/linearizability/model.ts';
export { ILLEGAL } from '../checkers/linearizability/model.ts';
export type { Checker, CheckResult } from '../checkers/types.ts';
export type { FaultRecord, Nemesis } from '../nemeses/types.ts';
export { type CheckOptions, check } from './api/check.ts';
export { type RunPlanOptions, runPlan } from './api/run-plan.ts';
export { type RunTestOptions, runTest } from './api/run-test.ts';
export {
  defineChecker,
  defineClient,
  defineDaemonDatabase,
  defineDatabase,
  defineModel,
  defineNemesis,
  definePlugin,
  defineTopology,
  defineWorkload,
  type Plugin,
} from './app/plugin/define.ts';
export {
  type Capable,
  type DatabaseCapability,
  DatabaseCapabilityMissingError,
  type DbContext,
  hasCapability,
} from './core/database/capabilities.ts';
export { NOT_APPLIED, type Operation } from './core/history/operation.ts';
export { loadHistory } from './core/history/read.ts';
export { CallTimeoutError } from './core/util/bounded.ts';
export { UserError } from './core/util/errors.ts';
export type { ClientContext } from './lib/clients/registry.ts';
export type { Client, ClientOp, Completion, InvokeContext } from './lib/clients/types.ts';
export type { Database } from './lib/databases/types.ts';
export type { Workload, WorkloadOptions } from './lib/workloads/types.ts';
