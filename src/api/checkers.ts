/**
 * `faultline/checkers`: what checker and model plugins exchange beyond the Checker and Model protocols:
 * the request a checker receives, anomalies, options schemas, definitions, a checker's stream form
 * (`OpSink`, and `StreamIntake`: whether its ops may carry compact values, see `faultline/history`),
 * and the model internals (`CompleteModel`, the defaults `completeModel` applies).
 */
export type { CheckerRequest } from '../../checkers/compose.ts';
export { type CompleteModel, completeModel } from '../../checkers/linearizability/model.ts';
export type { ModelDefinition } from '../../checkers/linearizability/models/registry.ts';
export type { CheckerDefinition, OptionsSchema } from '../../checkers/registry.ts';
export type { Anomaly, CheckContext, OpSink, StreamIntake, Validity } from '../../checkers/types.ts';
export type { ClientDefinition } from '../lib/clients/registry.ts';
export type { WorkloadDefinition } from '../lib/workloads/index.ts';
export type { CheckerSpec } from '../lib/workloads/types.ts';
