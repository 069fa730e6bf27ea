import type { Remote } from '../src/core/control/types.ts';

/**
 * The nemesis contract. A fault is appended to the fault ledger before it is injected and its heal
 * after it is undone, so `faultline heal --ledger` can always finish what a killed run left behind.
 * A fault is only "landed" when evidence from the injector and from a victim says so.
 */

export interface Capability {
  name: string;
  available: boolean;
  /** Why not, and how to fix it (install command), when unavailable. */
  reason?: string;
  /** Set when a degraded substitute will be used instead (e.g. iptables statistic for netem loss). */
  substitute?: string;
}

export interface FaultSpec {
  /** Nemesis kind: partition, packet, clock, process, disk. */
  kind: string;
  /** Kind-specific action, e.g. "start", "kill", "pause", "bump", "disk-full". */
  action: string;
  /** Target selector: one, minority, majority, all, primaries, or explicit node names. */
  targets?: string | string[];
  /** Kind-specific parameters (topology, delay, offset …). */
  params?: Record<string, unknown>;
}

export interface EvidenceSignal {
  /** 'injector' (the side that applied the fault) or 'victim' (a node that should feel it). */
  side: 'injector' | 'victim';
  node: string;
  /** What was measured, e.g. "FAULTLINE DROP packets", "tcp connect n1→n3:2380", "/proc/123/status State". */
  signal: string;
  before?: unknown;
  during?: unknown;
  after?: unknown;
  /** Does this signal show the fault took effect? */
  landed: boolean;
  note?: string;
}

export interface FaultEvidence {
  landed: boolean;
  /** Why not landed, or which substitution was used. */
  reason?: string;
  signals: EvidenceSignal[];
}

export interface FaultRecord {
  /** Fault window id (w1, w2 …): what history events carry in faultEpoch. */
  id: string;
  spec: FaultSpec;
  nodes: string[];
  injectedAt: string;
  /** Everything heal needs to undo the fault without re-deriving it (rules added, pids paused, files). */
  undo: Record<string, unknown>;
  evidence?: FaultEvidence;
  healedAt?: string;
}

export interface InjectOptions {
  beforeApply?(record: FaultRecord): void | Promise<void>;
}

export interface Nemesis {
  readonly kind: string;
  capabilities(remote: Remote, node: string): Promise<Capability[]>;
  /**
   * Apply the fault. `opts.beforeApply` is called with the complete record (everything heal needs) after
   * planning and before the node is touched: the fault session appends it to the ledger there.
   */
  inject(remote: Remote, spec: FaultSpec, id: string, opts?: InjectOptions): Promise<FaultRecord>;
  evidence(remote: Remote, record: FaultRecord): Promise<FaultEvidence>;
  heal(remote: Remote, record: FaultRecord): Promise<void>;
  /** Sweep one node for anything this nemesis may have left behind; returns what was found and fixed. */
  verifyClean(remote: Remote, node: string): Promise<CleanReport>;
  /**
   * After heal: the same signals again, so evidence reads before / during / after (a cut link reachable
   * again, a paused pid running, a clock back in step). Optional: kinds with nothing to re-measure omit it.
   */
  evidenceAfterHeal?(remote: Remote, record: FaultRecord): Promise<FaultEvidence>;
}

export interface CleanReport {
  clean: boolean;
  /** What was left behind and has now been undone. */
  fixed: string[];
  /** What was found (including what could not be fixed). */
  found: string[];
}

/**
 * Thrown by `inject` (before anything is touched or written to the ledger) when a node cannot do what the
 * spec asks and no documented substitute exists: e.g. netem delay on a kernel without sch_netem. The
 * runner turns it into "fault not proven" for the scenario; it is never a silent no-op.
 */
export class CapabilityMissingError extends Error {
  override readonly name = 'CapabilityMissingError';
  constructor(
    readonly node: string,
    readonly capability: string,
    readonly reason: string,
  ) {
    super(`${node}: ${capability} unavailable: ${reason}`);
  }
}
