/**
 * `faultline/nemeses`: what nemesis and topology plugins exchange beyond the Nemesis protocol: fault
 * specs, evidence, plan steps, definitions, partition grudges.
 */
export type { NemesisSpec } from '../../nemeses/generic.ts';
export type { Grudge, TopologyDefinition, TopologyOptions } from '../../nemeses/topology.ts';
export type {
  Capability,
  CleanReport,
  EvidenceSignal,
  FaultEvidence,
  FaultSpec,
  NemesisDefinition,
  NemesisStep,
} from '../../nemeses/types.ts';
