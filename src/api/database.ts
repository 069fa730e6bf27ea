/**
 * `faultline/database`: the vocabulary of the Database protocol's optional capabilities (each one a
 * protocol of its own, detected by shape) and what they exchange; daemon descriptions; the process
 * capability of a daemon with a pidfile (`pidfileProcess`); the runner's bounds on database calls.
 */
export {
  type ClockWrapper,
  type ClusterFormation,
  capabilitiesOf,
  DATABASE_CAPABILITIES,
  type DatabaseCapabilities,
  type DbVersionReport,
  type MemberInfo,
  type MembershipControl,
  type PeerView,
  type ProcessControl,
  STOP_SIGNALS,
  type StopSignal,
} from '../core/database/capabilities.ts';
export { pidfileProcess } from '../lib/databases/daemon.ts';
export type { DaemonDescription } from '../lib/databases/daemon-db.ts';
export type { DatabaseDefinition } from '../lib/databases/registry.ts';
export { DB_CALL_TIMEOUTS } from '../lib/databases/types.ts';
