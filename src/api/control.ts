/**
 * `faultline/control`: what database adapters run commands on the nodes with: the remote (SSH) and its
 * results, quoting, packages, addresses, bounded calls and durations.
 */
export { clusterAddress } from '../core/control/addresses.ts';
export {
  ensurePackages,
  familyFromOsRelease,
  installCommand,
  PACKAGE_FAMILIES,
  type PackageFamily,
  parseOsRelease,
} from '../core/control/packages.ts';
export { shellJoin, shellQuote } from '../core/control/quote.ts';
export type { ExecOptions, ExecResult, NodeSpec, Remote } from '../core/control/types.ts';
export { bounded } from '../core/util/bounded.ts';
export { parseDuration } from '../core/util/duration.ts';
