import type { Remote } from '../../core/control/types.ts';
import type { DbVersionReport } from './artifact.ts';

/**
 * The database protocol, split the way Jepsen's is: a small required core (`jepsen.db/DB`: set up, tear
 * down, where clients connect, wait until it serves) plus optional capabilities (Jepsen's Kill, Pause,
 * Primary, LogFiles …). A database declares only what it can do; a fault or audit that needs a capability
 * the database lacks says so (the scenario is INCONCLUSIVE-env, naming the capability), never crashes.
 *
 * Every per-node method runs on the control node and acts on `node` through `ctx.remote` (SSH); the
 * runner calls them in Jepsen's order:
 *
 *   teardown(all) → install?(all) → setup(all, in parallel: configure and start) → awaitReady
 *   → form? (once on the primary, or on each joining node in order) → … workload + nemeses …
 *   → heal → logFiles?/collect → teardown(all)
 *
 * Every call is bounded by the runner (see `DB_CALL_TIMEOUTS`): one that overruns is abandoned with its
 * reason logged, and the run goes on to heal, check and report.
 */
export interface DbContext {
  remote: Remote;
  /** Every node of the test, in order (cluster membership flags are built from it). */
  nodes: readonly string[];
  /**
   * Every node's name, cluster address and hostname (`hostname -s` on the node), in node order. The
   * runner fills it in before `setup`; absent only outside a run (a bare adapter in a unit test).
   */
  members?: readonly MemberInfo[];
  /**
   * The address a member advertises to its peers, given its real one (`peerAddress`): the run's proxy
   * when a fault acts on the members' peer links, so their traffic to each other goes through it.
   * Absent: the real address.
   */
  peerRoute?: (address: string, node: string) => string;
}

/** What a node is called by faultline, by the network and by itself. */
export interface MemberInfo {
  /** The node's name in the inventory (n1, n2 …). */
  name: string;
  /** The address peers and clients use. */
  address: string;
  /** The node's own short hostname (what Erlang's `rabbit@host` and similar node ids are built from). */
  hostname: string;
}

/**
 * Cluster formation, after every node's `setup` and `awaitReady`: `primary` runs `run` once on the first
 * node (e.g. `redis-cli --cluster create`); `joining` runs it on every other node, one after the other in
 * node order (e.g. `rabbitmqctl join_cluster rabbit@n1`), so each joins a cluster that already has its
 * predecessors. `members` is every node's name, address and hostname; `run` throws when formation failed.
 */
export interface ClusterFormation {
  on: 'primary' | 'joining';
  run(ctx: DbContext, node: string, members: readonly MemberInfo[]): Promise<void>;
}

export interface Database {
  readonly name: string;
  /** Configure and start the database on one node (setup runs on every node in parallel). */
  setup(ctx: DbContext, node: string): Promise<void>;
  /** Stop it and remove its data, config and logs. */
  teardown(ctx: DbContext, node: string): Promise<void>;
  /** Where clients connect, e.g. http://10.213.0.2:2379 or redis://…. */
  clientAddress(ctx: DbContext, node: string): string;
  /**
   * Where the members reach `node` (its real peer listener, e.g. http://10.213.0.2:2380). Declaring it
   * promises that every member is told its peers' addresses through `ctx.peerRoute` (flags, config), so
   * faultline can put its proxy between the members (proxy faults on peer links).
   */
  peerAddress?(ctx: DbContext, node: string): string;
  /** After every node's setup: wait until the cluster serves clients (Jepsen's barrier + ready wait). */
  awaitReady(ctx: DbContext, timeoutMs: number): Promise<void>;

  // ---- optional capabilities

  /** Make the software present on the node (e.g. apt-get install when missing). Idempotent. */
  install?(ctx: DbContext, node: string): Promise<void>;
  /** Process control: what kill, pause and restart faults act on. */
  readonly process?: ProcessControl;
  /** Nodes currently acting as primary / leader (may be empty during an election). */
  primaries?(ctx: DbContext): Promise<string[]>;
  /** Remote paths worth downloading into the run directory (the SUT log audit reads them). */
  logFiles?(ctx: DbContext, node: string): string[];
  /**
   * Log lines that look alarming to the SUT log audit (RF7: panic, fatal, internal error) but are the
   * database's documented reaction to a fault, e.g. PostgreSQL's per-connection `FATAL:  the database system
   * is in recovery mode` after a kill. They are counted and shown as expected, not as swallowed errors.
   * Keep them narrow: a pattern that matches a real crash hides it.
   */
  readonly logNoise?: readonly RegExp[];
  /** Remove the data (the daemon must be stopped). */
  wipe?(ctx: DbContext, node: string): Promise<void>;
  /** The data directory on a node (disk faults). */
  dataDir?(ctx: DbContext, node: string): string;
  /** Starting the daemon through a wrapper: clock faults move the database's own clock this way. */
  readonly clock?: ClockWrapper;
  /**
   * How `observer`, a peer, sees `node` (probed on the observer across the cluster network): the victim
   * side of process faults, the database's own members seeing one of them down, then back.
   */
  peerView?(ctx: DbContext, observer: string, node: string): Promise<PeerView>;
  /** Cluster membership: remove a member and add it back (membership faults). */
  readonly membership?: MembershipControl;
  /** Form the cluster once every node is up (see `ClusterFormation`). */
  readonly form?: ClusterFormation;
  /**
   * The version the database itself reports on every node (after it serves), with the one the user
   * expects and where the binary came from; the run records it, and a mismatch is reported.
   */
  versions?(ctx: DbContext): Promise<DbVersionReport>;
}

/** How long the runner waits for each database hook before abandoning it (ms). */
export const DB_CALL_TIMEOUTS = {
  install: 600_000,
  setup: 300_000,
  /** awaitReady is given its own timeout (90 s) and a little more to report. */
  awaitReady: 100_000,
  form: 300_000,
  teardown: 120_000,
} as const;

/**
 * Cluster membership as the database itself manages it (Jepsen's etcd membership nemesis: remove a
 * member, later add it back). Every method returns a shell command, so a fault record holds all its
 * heal needs and `faultline heal --ledger` can restore the membership without the database adapter.
 * `peers` are members that stay in the cluster (the commands may ask any of them).
 */
export interface MembershipControl {
  /** Run on a peer: prints the members the database lists, one name per line (`(unstarted)` for a member added but not yet running). */
  listCommand(ctx: DbContext, peers: readonly string[]): string;
  /** Run on a peer: removes `node` from the cluster and prints the database's answer. */
  removeCommand(ctx: DbContext, node: string, peers: readonly string[]): string;
  /** Run on `node` after its removal: stops it, wipes its data and keeps the database's own start from bringing the removed member back. */
  retireCommand(ctx: DbContext, node: string): string;
  /** Run on a peer: adds `node` back as a new member (does nothing when it is a member). */
  addCommand(ctx: DbContext, node: string, peers: readonly string[]): string;
  /** Run on `node` after its add: starts it as a joining member with empty data (does nothing when it is a running member). */
  joinCommand(ctx: DbContext, node: string, peers: readonly string[]): string;
}

/** A member as a peer sees it; `up: null` when the peer could not tell (never read as down). */
export interface PeerView {
  up: boolean | null;
  detail: string;
}

/** The daemon's process, by pidfile: start, kill, pause, resume never touch another process. */
export interface ProcessControl {
  /** The executable's name on the nodes (what /proc/PID/comm shows), e.g. etcd, redis-server. */
  readonly processName: string;
  /** The daemon's pidfile on a node. */
  pidFile(ctx: DbContext, node: string): string;
  /** Start again with the existing data (after a kill). No-op when it is running. */
  start(ctx: DbContext, node: string): Promise<void>;
  /** SIGKILL by pidfile and wait until it is gone. */
  kill(ctx: DbContext, node: string): Promise<void>;
  /** SIGSTOP by pidfile. */
  pause(ctx: DbContext, node: string): Promise<void>;
  /** SIGCONT by pidfile. */
  resume(ctx: DbContext, node: string): Promise<void>;
}

export interface ClockWrapper {
  /**
   * Start the daemon through this wrapper (an executable that execs the real binary, e.g. the clock
   * nemesis's libfaketime wrapper) instead of the binary itself; null goes back to the binary.
   */
  setWrapper(node: string, wrapperPath: string | null): void;
  /** The binary the wrapper must exec, as found on the PATH of the nodes. */
  readonly binary: string;
  /** A command run on a node that prints the database's own idea of the time (clock-fault evidence). */
  readonly timeCommand?: string;
}

/** The older name of the protocol. */
export type DB = Database;

/** Names of the optional capabilities, as faults, audits and messages name them. */
export const DB_CAPABILITIES = {
  process: 'process control (pidfile; start, kill, pause, resume)',
  primaries: 'primaries (the current leaders)',
  logs: 'log files',
  'data-dir': 'data directory',
  clock: 'clock wrapper (start through libfaketime)',
  membership: 'membership (remove a member and add it back)',
  wipe: 'wipe',
  install: 'install',
  form: 'cluster formation',
} as const;
export type DbCapabilityName = keyof typeof DB_CAPABILITIES;

/** Which optional capabilities a database declares. */
export function capabilitiesOf(db: Database): DbCapabilityName[] {
  const out: DbCapabilityName[] = [];
  if (db.process) out.push('process');
  if (db.primaries) out.push('primaries');
  if (db.logFiles) out.push('logs');
  if (db.dataDir) out.push('data-dir');
  if (db.clock) out.push('clock');
  if (db.membership) out.push('membership');
  if (db.wipe) out.push('wipe');
  if (db.install) out.push('install');
  if (db.form) out.push('form');
  return out;
}
