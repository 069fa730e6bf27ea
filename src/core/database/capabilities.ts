import type { Remote } from '../control/types.ts';

/**
 * The system under test's capabilities: one vocabulary that databases implement, nemeses and audits ask
 * for, and plugins declare. Split the way Jepsen's `jepsen.db` is: the Database protocol itself needs
 * only setup and teardown (and what every run needs: where clients connect, when it serves); each
 * optional capability (Jepsen's Kill, Pause, Primary, LogFiles …) is a protocol of its own, detected by
 * shape (`hasCapability`), never by a list of names kept beside the methods.
 *
 * Every call runs on the control node and acts on `node` through `ctx.remote` (SSH).
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
 * One member as a peer sees it (etcd's /health of the member asked from another node, Redis's PING from
 * a replica). `up: null` when the peer could not tell (its probe tool missing): never read as down.
 */
export interface PeerView {
  up: boolean | null;
  /** What the peer saw, e.g. `{"health":"true"}`, `connection refused`, `no answer in 2 s`. */
  detail: string;
}

/** The signals a daemon may name for its clean shutdown (ProcessControl.stopSignal). */
export const STOP_SIGNALS = ['TERM', 'INT', 'QUIT'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/**
 * The daemon's process, by pidfile: its start and its kill never touch another process. Process faults
 * (kill, pause, resume, restart) act through `pidFile` and `processName` on the daemon and every process
 * it started, and record shell commands to undo them, so `faultline heal` needs no adapter.
 */
export interface ProcessControl {
  /** The executable's name on the nodes (what /proc/PID/comm shows), e.g. etcd, redis-server. */
  readonly processName: string;
  /** The daemon's pidfile on a node. */
  pidFile(ctx: DbContext, node: string): string;
  /**
   * The signal that asks the daemon for a prompt clean shutdown, where faults stop it to restart it
   * (the lazy filesystem's move); default TERM. PostgreSQL's is INT, its fast shutdown: on TERM it
   * waits for every client to disconnect.
   */
  readonly stopSignal?: StopSignal;
  /** Start again with the existing data (after a kill). No-op when it is running. */
  start(ctx: DbContext, node: string): Promise<void>;
  /** SIGKILL by pidfile (the daemon and the processes it started) and wait until they are gone: teardown. */
  kill(ctx: DbContext, node: string): Promise<void>;
}

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

/** The version a database reported on each node, against the one the user expects. */
export interface DbVersionReport {
  db: string;
  /** `--db-version` / `dbOptions.version`; null when none was given. */
  expected: string | null;
  /** Where the binary came from: the packaged one, or the tarball/binary with its sha256. */
  source: string;
  nodes: { node: string; reported: string | null; error?: string }[];
  /** Nodes whose reported version differs from the expected one (or reported none). */
  mismatched: string[];
}

/**
 * The optional capability protocols, by the name faults, audits and messages use. A database implements
 * the members of the ones it has (`class Kv implements Database, Capable<'process' | 'logs'>`).
 */
export interface DatabaseCapabilities {
  /** Process control: what kill, pause and restart faults act on. */
  process: { readonly process: ProcessControl };
  /** Nodes currently acting as primary / leader (may be empty during an election). */
  primaries: { primaries(ctx: DbContext): Promise<string[]> };
  /**
   * Remote paths worth downloading into the run directory (the SUT log audit reads them), and log lines
   * that look alarming to the audit (panic, fatal, internal error) but are the database's documented
   * reaction to a fault (PostgreSQL's `FATAL:  the database system is in recovery mode` after a kill):
   * counted and shown as expected. Keep them narrow: a pattern that matches a real crash hides it.
   */
  logs: { logFiles(ctx: DbContext, node: string): string[]; readonly logNoise?: readonly RegExp[] };
  /** The data directory on a node (disk faults). */
  'data-dir': { dataDir(ctx: DbContext, node: string): string };
  /** Starting the daemon through a wrapper: clock faults move the database's own clock this way. */
  clock: { readonly clock: ClockWrapper };
  /** Cluster membership: remove a member and add it back (membership faults). */
  membership: { readonly membership: MembershipControl };
  /**
   * How `observer`, a peer, sees `node` (probed on the observer across the cluster network): the victim
   * side of process faults, the database's own members seeing one of them down, then back.
   */
  'peer-view': { peerView(ctx: DbContext, observer: string, node: string): Promise<PeerView> };
  /**
   * Where the members reach `node` (its real peer listener, e.g. http://10.213.0.2:2380). Declaring it
   * promises that every member is told its peers' addresses through `ctx.peerRoute` (flags, config), so
   * faultline can put its proxy between the members (proxy faults on peer links).
   */
  'peer-address': { peerAddress(ctx: DbContext, node: string): string };
  /** Remove the data (the daemon must be stopped). */
  wipe: { wipe(ctx: DbContext, node: string): Promise<void> };
  /** Make the software present on the node (e.g. apt-get install when missing). Idempotent. */
  install: { install(ctx: DbContext, node: string): Promise<void> };
  /** Form the cluster once every node is up (see `ClusterFormation`). */
  form: { readonly form: ClusterFormation };
  /**
   * The version the database itself reports on every node (after it serves), with the one the user
   * expects and where the binary came from; the run records it, and a mismatch is reported.
   */
  versions: { versions(ctx: DbContext): Promise<DbVersionReport> };
}

export type DatabaseCapability = keyof DatabaseCapabilities;

type Intersect<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** The members of the named capabilities, e.g. `Capable<'process' | 'primaries'>`. */
export type Capable<C extends DatabaseCapability> = Intersect<DatabaseCapabilities[C]>;

/**
 * Each capability: the member that carries it (its presence is the declaration) and how faults, audits
 * and messages describe it. The one list of capability names.
 */
export const DATABASE_CAPABILITIES: {
  readonly [C in DatabaseCapability]: { member: string; label: string };
} = {
  process: { member: 'process', label: 'process control (pidfile; start, kill)' },
  primaries: { member: 'primaries', label: 'primaries (the current leaders)' },
  logs: { member: 'logFiles', label: 'log files' },
  'data-dir': { member: 'dataDir', label: 'data directory' },
  clock: { member: 'clock', label: 'clock wrapper (start through libfaketime)' },
  membership: { member: 'membership', label: 'membership (remove a member and add it back)' },
  'peer-view': { member: 'peerView', label: 'peer view (how a member sees another)' },
  'peer-address': { member: 'peerAddress', label: 'peer address (proxy faults on peer links)' },
  wipe: { member: 'wipe', label: 'wipe' },
  install: { member: 'install', label: 'install' },
  form: { member: 'form', label: 'cluster formation' },
  versions: { member: 'versions', label: 'reported versions' },
};

/** Does `sut` declare the capability (by shape: its member is there)? */
export function hasCapability<T extends object, C extends DatabaseCapability>(
  sut: T,
  cap: C,
): sut is T & DatabaseCapabilities[C] {
  const v = (sut as Record<string, unknown>)[DATABASE_CAPABILITIES[cap].member];
  return v !== undefined && v !== null;
}

/** The log lines the SUT log audit reads as the database's expected reaction to a fault (none when undeclared). */
export function logNoiseOf(sut: object): readonly RegExp[] | undefined {
  return hasCapability(sut, 'logs') ? sut.logNoise : undefined;
}

/** The capabilities `sut` declares, in the vocabulary's order. */
export function capabilitiesOf(sut: object): DatabaseCapability[] {
  return (Object.keys(DATABASE_CAPABILITIES) as DatabaseCapability[]).filter((c) => hasCapability(sut, c));
}

/** A fault (or audit) needs a capability the system under test does not declare. */
export class DatabaseCapabilityMissingError extends Error {
  override readonly name = 'DatabaseCapabilityMissingError';
  constructor(
    readonly capability: DatabaseCapability,
    readonly db: string,
    readonly why: string,
  ) {
    super(`database ${db} does not declare the ${capability} capability (${why})`);
  }
}

/**
 * The system under test as the fault plane sees it: the database (its name and whichever capabilities
 * it declares), the context its capability calls take, and the clock parameters of the run (the
 * libfaketime wrappers installed for it, or settime), which clock faults read.
 */
export interface FaultTarget {
  db: { readonly name: string } & Partial<Capable<DatabaseCapability>>;
  ctx: DbContext;
  clock?: () => Record<string, unknown>;
}

/**
 * The system under test, when it declares `cap`; otherwise the fault is refused before anything is
 * touched, naming the capability and why the fault needs it.
 */
export function requireCapability<C extends DatabaseCapability>(
  sut: FaultTarget | undefined,
  cap: C,
  why: string,
): DatabaseWith<C> {
  const s = databaseWith(sut, cap);
  if (!s) throw new DatabaseCapabilityMissingError(cap, sut?.db.name ?? 'under test', why);
  return s;
}

/** A system under test known to declare `cap`. */
export type DatabaseWith<C extends DatabaseCapability> = FaultTarget & { db: DatabaseCapabilities[C] };

/** The system under test when it declares `cap`, else undefined. */
export function databaseWith<C extends DatabaseCapability>(
  sut: FaultTarget | undefined,
  cap: C,
): DatabaseWith<C> | undefined {
  return sut && hasCapability(sut.db, cap) ? (sut as DatabaseWith<C>) : undefined;
}
