import type { Remote } from '../src/core/control/types.ts';
import type { DatabaseCapability, FaultTarget } from '../src/core/database/capabilities.ts';
import type { Rng } from '../src/core/generator/rng.ts';
import type { OptionsSchema } from '../src/core/util/options.ts';
import type { Substitution } from './substitutes.ts';

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
  /** Substitutes used instead of the native mechanism (./substitutes.ts): recorded, never silent. */
  substitutions?: Substitution[];
  /** The same signals measured again after heal (a cut link reachable, a paused pid running). */
  afterHeal?: FaultEvidence;
  healedAt?: string;
}

export interface InjectOptions {
  beforeApply?(record: FaultRecord): void | Promise<void>;
  /** Start the system under test on a node (its own start): what a process restart brings back. */
  startProcess?(node: string): Promise<void>;
  /** The system under test (its peers' view of a member: the victim side of process faults). */
  sut?: FaultTarget;
}

/** What evidence may read besides the nodes: the system under test's own views. */
export interface EvidenceContext {
  sut?: FaultTarget;
  /**
   * After heal: the other faults still in force (e.g. "w4 partition"). A peer cut off by one of them
   * cannot show the member back, so that view is read once and not judged, rather than waited for.
   */
  othersInForce?: string[];
}

export interface Nemesis {
  readonly kind: string;
  capabilities(remote: Remote, node: string): Promise<Capability[]>;
  /**
   * Apply the fault. `opts.beforeApply` is called with the complete record (everything heal needs) after
   * planning and before the node is touched: the fault session appends it to the ledger there.
   */
  inject(remote: Remote, spec: FaultSpec, id: string, opts?: InjectOptions): Promise<FaultRecord>;
  evidence(remote: Remote, record: FaultRecord, ctx?: EvidenceContext): Promise<FaultEvidence>;
  heal(remote: Remote, record: FaultRecord): Promise<void>;
  /** Sweep one node for anything this nemesis may have left behind; returns what was found and fixed. */
  verifyClean(remote: Remote, node: string): Promise<CleanReport>;
  /**
   * After heal: the same signals again, so evidence reads before / during / after (a cut link reachable
   * again, a paused pid running, a clock back in step). Optional: kinds with nothing to re-measure omit it.
   */
  evidenceAfterHeal?(remote: Remote, record: FaultRecord, ctx?: EvidenceContext): Promise<FaultEvidence>;
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

/** A plan's nemesis step, after validation by its nemesis's step schema. */
export interface NemesisStep {
  kind: string;
  /** The nemesis's action (process kill, clock bump, disk disk-full …); partition steps use `topology`. */
  action?: string;
  topology?: string;
  /** Packet steps: the behaviour (delay, loss …) and its params. */
  behaviour?: string;
  targets?: string | string[];
  params?: Record<string, unknown>;
  deltaMs?: number;
  startS: number;
  durationS: number;
  intervalS?: number;
  count?: number;
}

/** A nemesis op (Jepsen's vocabulary) and its value, as the generator hands it to the fault plane. */
export interface FaultOp {
  f: string;
  value: Record<string, unknown>;
}

/** What a nemesis op means: the window class it opens or closes, the nemesis kind and the action. */
export interface FaultOpMeaning {
  /** Window class: a stop op closes every open window of its class. */
  cls: string;
  kind: string;
  action: string;
  starts: boolean;
}

/**
 * One action a nemesis can take, with the ops that open and close its fault windows (Jepsen's names:
 * kill/start, pause/resume, start-partition/stop-partition, bump-clock/reset-clock …).
 */
export interface FaultActionDefinition {
  name: string;
  /** Window class: stop ops close every open window of the class. */
  cls: string;
  startOp: string;
  /** null: a one-shot fault with nothing to undo at the window's end (file corruption). */
  stopOp: string | null;
  /** After healing a window of this action, start the database again (kill, terminate). */
  restartsDb?: boolean;
  /**
   * The inject stops the database on purpose (to move its data directory onto another filesystem): the
   * plane starts it again right after the inject, before taking landing evidence.
   */
  startsDbAfterInject?: boolean;
  /**
   * The fault can only harm what clients had acknowledged while it was in force (a power failure loses
   * writes acknowledged through the cache, nothing else): a window in which no client op was
   * acknowledged exercised nothing, and is not counted as landed (see the run's exposure signal).
   */
  needsAcknowledgedOps?: boolean;
  /**
   * Nothing ever undoes this fault's damage, not even the run's final heal (a one-shot whose params keep
   * no copy to restore: a corruption without backup). Its window stays open to the final heal only
   * because nothing closes it; once injected it is no longer in force, the database lives with what it
   * did, so the run judges what follows (the rate, the recovery after a later heal) as the database's
   * own doing, not as time under the fault.
   */
  permanent?: (params: Readonly<Record<string, unknown>>) => boolean;
  /** Database capabilities the action needs. */
  dbNeeds?: readonly DatabaseCapability[];
  /** What the nodes need (capability probe rows), with the install hint. */
  nodeNeeds?: readonly { name: string; hint: string }[];
}

/** A fault class `faultline test --nemesis` can schedule at random (Jepsen's nemesis packages). */
export interface FaultClassDefinition {
  /** The class name on the command line: partition, kill, pause, clock, packet … */
  name: string;
  kind: string;
  /** Target selectors (or partition topologies) drawn from, when the caller gives none. */
  defaultTargets: readonly string[];
  /**
   * The choices are partition topologies, not target selectors: a default the cluster is too small
   * for is left out by the topology's own minimum (`one` cuts one node off the rest: two nodes at
   * least), where a selector's `one` is any single node.
   */
  choicesAreTopologies?: boolean;
  /** Part of `--nemesis all`. */
  inAll: boolean;
  /** The op opening a window on `choice` (a target or topology); `rng` is the class's seeded stream. */
  start(choice: string, rng: Rng): FaultOp;
  /** The op closing every window of the class; null for one-shot faults. */
  stop: FaultOp | null;
}

/**
 * A nemesis as the registry knows it: how to load it, its actions (with their ops), the step schema of a
 * plan binding, and how a start op becomes a fault spec for the nemesis (targets resolved, SUT hooks).
 */
export interface NemesisDefinition {
  kind: string;
  summary: string;
  /**
   * Where its faults act: `nodes` (the default: over SSH, on the nodes) or `control` (in the control
   * process, on the clients' path: needs nothing on the nodes, so a client-only run may use it).
   */
  reach?: 'nodes' | 'control';
  load(): Promise<Nemesis>;
  actions: readonly FaultActionDefinition[];
  /** Random-schedule classes this nemesis provides. */
  classes?: readonly FaultClassDefinition[];
  /** Schema of a plan step of this kind (`{kind, …, startS, durationS}`), defaults applied. */
  step: OptionsSchema;
  /** The start and stop ops of one plan step. */
  stepOps(step: NemesisStep): { start: FaultOp; stop: FaultOp | null };
  /** The fault spec for a start op: targets resolved, params filled from the op value and the SUT. */
  toSpec(action: string, value: Record<string, unknown>, ctx: SpecContext): Promise<FaultSpec>;
  /** Database capabilities a plan step needs (beyond its action's): e.g. a `primaries` topology. */
  stepDbNeeds?(step: NemesisStep): readonly DatabaseCapability[];
  /**
   * What the nodes need for a plan step, when it depends on the step rather than the action (a packet
   * `rate` needs tc's tbf, a `delay` needs netem): replaces the action's `nodeNeeds` for that step.
   */
  stepNodeNeeds?(step: NemesisStep): readonly { name: string; hint: string }[];
}

export interface SpecContext {
  nodes: readonly string[];
  rng: Rng;
  /** The system under test; absent when the run has none (a client-only run). */
  sut?: FaultTarget;
  /** Resolve a target selector to node names (the one selector, primaries from the SUT). */
  resolve(selector: unknown): Promise<string[]>;
}

/** The interpreter's nemesis thread: carries out nemesis ops and says which fault windows are open. */
export interface NemesisDriver {
  /** Carry out one nemesis op; the returned value (with evidence) becomes the completion's value. */
  invoke(op: { f: string; value: unknown }, signal: AbortSignal): Promise<NemesisCompletion>;
  /** Ids of fault windows active right now, or null. */
  activeWindows(): string[] | null;
}

export interface NemesisCompletion {
  value: unknown;
  error?: unknown;
  extras?: Record<string, unknown>;
}
