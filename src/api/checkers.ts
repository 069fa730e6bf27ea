/**
 * `faultline/checkers`: what checker and model plugins exchange beyond the Checker and Model protocols:
 * the request a checker receives, anomalies, options schemas, definitions, a checker's stream form
 * (`OpSink`, and `StreamIntake`: whether its ops may carry compact values, see `faultline/history`),
 * the model internals (`CompleteModel`, the defaults `completeModel` applies), and what a model's
 * optional `refute` and `simplify` hooks are given and return (`EncodedOps`, `EncodedOp`, `Refutation`).
 */
export type { CheckerRequest } from '../../checkers/compose.ts';
export {
  type CompleteModel,
  completeModel,
  type Refutation,
} from '../../checkers/linearizability/model.ts';
export type { ModelDefinition } from '../../checkers/linearizability/models/registry.ts';
export type { EncodedOp, EncodedOps } from '../../checkers/linearizability/op-columns.ts';
export type { CheckerDefinition, OptionsSchema } from '../../checkers/registry.ts';
export type { Anomaly, CheckContext, OpSink, StreamIntake, Validity } from '../../checkers/types.ts';
export type { ClientDefinition } from '../lib/clients/registry.ts';
export type { WorkloadDefinition } from '../lib/workloads/index.ts';
export type { CheckerSpec } from '../lib/workloads/types.ts';
