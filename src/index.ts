/**
 * faultline's public API: what a plugin or a program built on faultline imports from 'faultline'.
 * Everything else is internal and may change between versions.
 *
 *   import { defineDatabase, defineClient, definePlugin } from 'faultline';
 *
 * - Extending faultline: `definePlugin` with `defineDatabase`, `defineClient`, `defineWorkload`,
 *   `defineChecker`, `defineNemesis`, `defineModel`, `defineTopology`, or no code at all with
 *   `defineDaemonDatabase` (a process with a port, described by a YAML file or an object).
 * - Running: `runPlan` (the `faultline run PLAN` command), `runTest` (the `faultline test` command), `check` (the `faultline check` command),
 *   `loadHistory` (every history format faultline reads).
 * - The protocols a plugin implements (Database, Client, Workload, Checker, Nemesis, Model) and the
 *   values they exchange (operations, completions, check results, fault records).
 */

export type { CheckerRequest } from '../checkers/compose.ts';
export type { AnyModel, Model } from '../checkers/linearizability/model.ts';
export { ILLEGAL } from '../checkers/linearizability/model.ts';
export type { ModelDefinition } from '../checkers/linearizability/models/index.ts';
export type { CheckerDefinition, OptionsSchema } from '../checkers/registry.ts';
export type { Anomaly, CheckContext, Checker, CheckResult, Validity } from '../checkers/types.ts';
export type { NemesisSpec } from '../nemeses/generic.ts';
export type { Grudge, TopologyDefinition, TopologyOptions } from '../nemeses/topology.ts';
export type {
  Capability,
  CleanReport,
  EvidenceSignal,
  FaultEvidence,
  FaultRecord,
  FaultSpec,
  Nemesis,
  NemesisDefinition,
  NemesisStep,
} from '../nemeses/types.ts';
export { type CheckOptions, type CheckOutcome, check } from './api/check.ts';
export { type RunPlanOptions, type RunPlanResult, runPlan } from './api/run-plan.ts';
export { type RunTestOptions, runTest } from './api/run-test.ts';
export {
  type CheckerInput,
  type ClientInput,
  type DatabaseInput,
  defineChecker,
  defineClient,
  defineDaemonDatabase,
  defineDatabase,
  defineModel,
  defineNemesis,
  definePlugin,
  defineTopology,
  defineWorkload,
  type ModelInput,
  type Plugin,
  type WorkloadInput,
} from './app/plugin/define.ts';
export {
  REPORT_JSON_SCHEMA_VERSION,
  type ReportJson,
  type ReportRow,
  reportJsonSchema,
} from './app/report/report-json.ts';
export type { TestRunResult } from './app/run/test-run.ts';
// ---- remote control (what database adapters run commands with)
export { clusterAddress } from './core/control/addresses.ts';
export {
  ensurePackages,
  familyFromOsRelease,
  installCommand,
  PACKAGE_FAMILIES,
  type PackageFamily,
  parseOsRelease,
} from './core/control/packages.ts';
export { shellJoin, shellQuote } from './core/control/quote.ts';
export type { ExecOptions, ExecResult, NodeSpec, Remote } from './core/control/types.ts';
// ---- generators, for workloads
export {
  any,
  cycle,
  eachProcess,
  eachThread,
  independentConcurrent,
  limit,
  mix,
  once,
  phases,
  Rng,
  repeat,
  SECOND,
  stagger,
  timeLimit,
} from './core/generator/index.ts';
export type { Context as GeneratorContext, GenLike, GenOp } from './core/generator/types.ts';
// ---- histories
export type { HistoryEvent, ProcessId } from './core/history/event.ts';
export { NOT_APPLIED, type Operation } from './core/history/operation.ts';
export { pairEvents } from './core/history/pair.ts';
export { type LoadOptions, loadHistory } from './core/history/read.ts';
export { bounded, CallTimeoutError } from './core/util/bounded.ts';
export { parseDuration } from './core/util/duration.ts';
export { UserError } from './core/util/errors.ts';
// ---- the protocols
export type { ClientContext, ClientDefinition } from './lib/clients/registry.ts';
export type { Client, ClientOp, Completion, InvokeContext } from './lib/clients/types.ts';
export type { DaemonDescription } from './lib/databases/daemon-db.ts';
export type { DatabaseDefinition } from './lib/databases/registry.ts';
export type {
  ClockWrapper,
  ClusterFormation,
  Database,
  DbContext,
  MemberInfo,
  ProcessControl,
} from './lib/databases/types.ts';
export { DB_CALL_TIMEOUTS } from './lib/databases/types.ts';
export type { WorkloadDefinition } from './lib/workloads/index.ts';
export type { CheckerSpec, Workload, WorkloadOptions } from './lib/workloads/types.ts';
