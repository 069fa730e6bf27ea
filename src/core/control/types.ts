/**
 * What the rest of faultline sees of a cluster: named nodes reached over SSH. Nemeses, DB adapters and
 * the runner depend only on these types; src/core/control/ implements them with ssh2.
 */

export interface NodeSpec {
  /** Logical name used everywhere else (n1, n2 …). */
  name: string;
  /** The SSH address: how the control host reaches the node's sshd (possibly a port forward). */
  host: string;
  port: number;
  /**
   * The cluster address: what peers and clients use, what partitions and probes target. Absent when it
   * is the SSH host; read it through `clusterAddress`.
   */
  address?: string;
  /** The port sshd answers on at the cluster address, when `address` is set (default 22). */
  clusterSshPort?: number;
  user: string;
  identityFile?: string;
  /** Name of an environment variable holding the SSH password (never the password itself). */
  passwordEnv?: string;
  /** Name of an environment variable holding the sudo password. */
  sudoPasswordEnv?: string;
  /**
   * Jump hosts as OpenSSH's ProxyJump: `[user@]host[:port]`, comma-separated for a chain (the first is
   * reached directly, each next one through the previous). Hops with no user log in as `user`.
   */
  proxyJump?: string;
  /** The same chain resolved (through ssh_config); when set it is used instead of `proxyJump`. */
  jumpHosts?: SshHop[];
  /**
   * OpenSSH's ProxyCommand: a shell command whose stdin/stdout is the connection to the node (or to the
   * first jump host). `%h`, `%p`, `%r` and `%%` are expanded when it is started.
   */
  proxyCommand?: string;
  /** Facts the inventory knows: e.g. local-cluster nodes share the control host's kernel clock. */
  sharedKernelClock?: boolean;
  /**
   * SSH handshake timeout per attempt for this node (seconds), over the caller's default: emulated VMs
   * behind a forward on a loaded host take longer than 10 s.
   */
  connectTimeoutS?: number;
  /**
   * How software gets onto the node (apt, dnf, yum, apk, zypper; `none`: pre-provisioned, nothing is
   * installed, missing binaries are reported). Absent: detected from the node's /etc/os-release.
   */
  packageFamily?: 'apt' | 'dnf' | 'yum' | 'apk' | 'zypper' | 'none';
  /** Free-form labels (e.g. the network namespace a local node lives in). */
  labels?: Record<string, string>;
}

/** One jump host of a ProxyJump chain. */
export interface SshHop {
  /** How the chain named it (an ssh_config alias, or the host itself). */
  alias: string;
  host: string;
  port: number;
  user: string;
  identityFile?: string;
  /** Only on the first hop: how to reach it (its own ProxyCommand). */
  proxyCommand?: string;
}

export interface ExecOptions {
  sudo?: boolean;
  /** Kill the remote command (not just the channel) after this long. */
  timeoutMs?: number;
  stdin?: string | Uint8Array;
  env?: Record<string, string>;
  cwd?: string;
  /** Throw a RemoteCommandError on a non-zero exit (default true). */
  check?: boolean;
}

export interface TransferOptions {
  /** Read or write the remote path with root rights (needed for root-owned paths as a non-root user). */
  sudo?: boolean;
}

export interface ExecResult {
  node: string;
  command: string;
  stdout: string;
  stderr: string;
  code: number;
  durationMs: number;
}

export interface NodeResult<T> {
  node: string;
  ok: boolean;
  value?: T;
  error?: Error;
}

/** A connected cluster. `command` strings are passed to the remote shell; build them with `shellQuote`. */
export interface Remote {
  readonly nodes: readonly NodeSpec[];
  node(name: string): NodeSpec;
  exec(node: string, command: string, opts?: ExecOptions): Promise<ExecResult>;
  /** With `sudo`, the file goes through a temporary file and is copied into place with root rights. */
  upload(node: string, localPath: string, remotePath: string, opts?: TransferOptions): Promise<void>;
  download(node: string, remotePath: string, localPath: string, opts?: TransferOptions): Promise<void>;
  onNodes<T>(nodes: readonly string[], fn: (node: string) => Promise<T>): Promise<NodeResult<T>[]>;
  close(): Promise<void>;
  /** Where every command run on the node is logged (`logs/ssh/<node>.commands.jsonl`), when it is. */
  commandLogPath?(node: string): string | null;
  /**
   * The host-key files this remote checks, as absolute paths (a fault ledger records them, so
   * `faultline heal --ledger` can verify the same nodes again with nothing else given).
   */
  knownHostsFiles?(): string[];
}
