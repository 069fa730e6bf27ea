/**
 * `faultline/clients`: helpers for a client of a built-in workload, so that a plugin's client records
 * what the built-in clients record.
 */
export { DRAIN_MAX, drainQueue } from '../lib/clients/drain.ts';
