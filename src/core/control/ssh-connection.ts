import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { Duplex, type Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, type ConnectConfig } from 'ssh2';
import { UserError } from '../util/errors.ts';
import { log } from '../util/log.ts';
import { proxyCommandsAllowed } from './command-fields.ts';
import { RemoteAuthError, RemoteConnectError, RemoteError, RemoteHostKeyError } from './connection-errors.ts';
import {
  appendKnownHost,
  checkHostKey,
  fingerprintSha256,
  type KnownHostEntry,
  knownHostsName,
  loadKnownHosts,
  preferredHostKeyAlgorithms,
} from './known-hosts.ts';
import { shellQuote } from './quote.ts';
import { parseJumpChain } from './ssh-config.ts';
import type { NodeSpec, SshHop } from './types.ts';

export type HostKeyPolicy = 'strict' | 'accept-new' | 'insecure';

export interface ConnectionOptions {
  /** Files checked for host keys (default ~/.ssh/known_hosts); faultline's own file is always added. */
  knownHostsFiles?: string[];
  /** Where `accept-new` records keys it trusts on first use (default ~/.faultline/known_hosts). */
  acceptedKnownHostsFile?: string;
  hostKeyPolicy?: HostKeyPolicy;
  /** Handshake timeout per attempt. */
  connectTimeoutMs?: number;
  /** Attempts per connect (first try included) for network-level failures. */
  connectAttempts?: number;
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
}

export const defaultAcceptedKnownHostsFile = (): string =>
  process.env.FAULTLINE_KNOWN_HOSTS ?? join(homedir(), '.faultline', 'known_hosts');

const DEFAULT_IDENTITIES = ['id_ed25519', 'id_ecdsa', 'id_rsa'];

const ALL_HOST_KEY_ALGS = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
];

interface Credentials {
  privateKey?: Buffer;
  password?: string;
  agent?: string;
}

function readCredentials(spec: NodeSpec): Credentials {
  const creds: Credentials = {};
  const keyPath =
    spec.identityFile ?? DEFAULT_IDENTITIES.map((f) => join(homedir(), '.ssh', f)).find((p) => existsSync(p));
  if (keyPath) {
    try {
      creds.privateKey = readFileSync(keyPath);
    } catch (err) {
      throw new RemoteAuthError(
        spec.name,
        `identity file ${keyPath} is not readable (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  if (spec.passwordEnv) {
    const pw = process.env[spec.passwordEnv];
    if (pw === undefined)
      throw new RemoteAuthError(
        spec.name,
        `environment variable ${spec.passwordEnv} (passwordEnv) is not set`,
      );
    creds.password = pw;
  }
  if (process.env.SSH_AUTH_SOCK) creds.agent = process.env.SSH_AUTH_SOCK;
  return creds;
}

class HostKeyRejection {
  constructor(readonly error: RemoteHostKeyError) {}
}

/**
 * Opens ssh2 connections for one node: host-key verification by policy, credentials from the inventory,
 * keepalive, jump host chains (OpenSSH's ProxyJump), ProxyCommand, and retry with exponential backoff
 * plus full jitter for network-level failures. Authentication and host-key failures are final: retrying
 * them only locks accounts.
 */
export class SshConnector {
  private knownHosts: KnownHostEntry[];
  private readonly policy: HostKeyPolicy;
  private readonly acceptedFile: string;
  private warnedInsecure = false;

  constructor(private readonly opts: ConnectionOptions = {}) {
    this.policy = opts.hostKeyPolicy ?? 'strict';
    this.acceptedFile = opts.acceptedKnownHostsFile ?? defaultAcceptedKnownHostsFile();
    this.knownHosts = loadKnownHosts(this.knownHostsFiles());
  }

  /** Every file host keys are checked against (the accepted-keys file included), absolute. */
  knownHostsFiles(): string[] {
    const files = (this.opts.knownHostsFiles ?? [join(homedir(), '.ssh', 'known_hosts')]).map((f) =>
      resolve(f),
    );
    const accepted = resolve(this.acceptedFile);
    return files.includes(accepted) ? files : [...files, accepted];
  }

  async connect(spec: NodeSpec): Promise<Client> {
    const attempts = Math.max(1, this.opts.connectAttempts ?? 4);
    let last: unknown;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) {
        // Exponential backoff with full jitter: 100, 200, 400 … ms caps at 3 s.
        const cap = Math.min(3000, 100 * 2 ** (attempt - 1));
        await sleep(Math.round(cap / 2 + Math.random() * (cap / 2)));
      }
      try {
        return await this.connectOnce(spec);
      } catch (err) {
        last = err;
        if (err instanceof RemoteAuthError || err instanceof RemoteHostKeyError) throw err;
        log().debug(
          { node: spec.name, attempt: attempt + 1, err: (err as Error).message },
          'ssh connect failed',
        );
      }
    }
    throw last instanceof RemoteError
      ? last
      : new RemoteConnectError(spec.name, `cannot connect: ${(last as Error)?.message ?? 'unknown error'}`);
  }

  private verifier(spec: NodeSpec, host: string, port: number, onReject: (r: HostKeyRejection) => void) {
    const name = knownHostsName(host, port);
    return (key: Buffer): boolean => {
      if (this.policy === 'insecure') {
        if (!this.warnedInsecure) {
          this.warnedInsecure = true;
          log().warn(
            'host key checking is disabled (host key policy insecure): connections can be intercepted',
          );
        }
        return true;
      }
      const verdict = checkHostKey(this.knownHosts, name, key);
      const fp = fingerprintSha256(key);
      if (verdict.status === 'match') return true;
      if (verdict.status === 'unknown' && this.policy === 'accept-new') {
        appendKnownHost(this.acceptedFile, name, key);
        this.knownHosts = loadKnownHosts(this.knownHostsFiles());
        log().info(
          { node: spec.name, host: name, fingerprint: fp, file: this.acceptedFile },
          'recorded new host key',
        );
        return true;
      }
      let msg: string;
      if (verdict.status === 'unknown') {
        msg = `host key for ${name} is not in known_hosts (${fp}); verify it, then add it (ssh-keyscan -p ${port} ${host} >> ~/.ssh/known_hosts) or pass --accept-new-host-keys`;
      } else if (verdict.status === 'changed') {
        const where = verdict.expected.map((e) => `${e.file}:${e.line}`).join(', ');
        msg = `HOST KEY CHANGED for ${name}: got ${fp}, known_hosts has a different key (${where}); refusing to connect`;
      } else {
        msg = `host key for ${name} is revoked (${verdict.entry.file}:${verdict.entry.line}); refusing to connect`;
      }
      onReject(new HostKeyRejection(new RemoteHostKeyError(spec.name, msg, fp, verdict.status)));
      return false;
    };
  }

  private baseConfig(
    spec: NodeSpec,
    host: string,
    port: number,
    user: string,
    onReject: (r: HostKeyRejection) => void,
  ): ConnectConfig {
    const creds = readCredentials(spec);
    const preferred = preferredHostKeyAlgorithms(this.knownHosts, knownHostsName(host, port));
    const config: ConnectConfig = {
      host,
      port,
      username: user,
      readyTimeout: spec.connectTimeoutS
        ? Math.max(spec.connectTimeoutS * 1000, this.opts.connectTimeoutMs ?? 0)
        : (this.opts.connectTimeoutMs ?? 10_000),
      keepaliveInterval: this.opts.keepaliveIntervalMs ?? 5_000,
      keepaliveCountMax: this.opts.keepaliveCountMax ?? 3,
      hostVerifier: this.verifier(spec, host, port, onReject),
      ...creds,
    };
    if (preferred.length > 0 && this.policy !== 'insecure') {
      const rest = ALL_HOST_KEY_ALGS.filter((a) => !preferred.includes(a));
      config.algorithms = { serverHostKey: [...preferred, ...rest] as never };
    }
    return config;
  }

  /**
   * One connection to the node: directly, through a ProxyCommand's stdio, and/or through each jump host
   * in turn (ssh2's `forwardOut` on one hop's connection is the socket of the next). Every hop's host
   * key is verified like a node's. Closing the node's connection closes the hops and the proxy command.
   */
  private async connectOnce(spec: NodeSpec): Promise<Client> {
    const legs = routeOf(spec);
    const opened: Client[] = [];
    let proxy: ProxyProcess | undefined;
    const closeAll = () => {
      for (const c of [...opened].reverse()) c.end();
      proxy?.kill();
    };
    try {
      const first = legs[0] as Leg;
      let sock: Duplex | undefined;
      if (first.proxyCommand) {
        proxy = startProxyCommand(spec.name, first);
        sock = proxy.socket;
      }
      for (let i = 0; i < legs.length; i++) {
        const leg = legs[i] as Leg;
        const legSpec: NodeSpec = { ...spec, name: leg.name };
        if (leg.identityFile) legSpec.identityFile = leg.identityFile;
        let client: Client;
        try {
          client = await this.handshake(legSpec, leg.host, leg.port, leg.user, sock);
        } catch (err) {
          // A proxy command that died explains the failure better than "closed during handshake".
          const died = i === 0 ? await proxy?.failure() : undefined;
          throw died ? new RemoteConnectError(spec.name, died) : err;
        }
        opened.push(client);
        const next = legs[i + 1];
        if (next) sock = await forward(client, leg, next, spec.name);
      }
      const node = opened[opened.length - 1] as Client;
      node.on('close', closeAll);
      return node;
    } catch (err) {
      closeAll();
      throw err;
    }
  }

  private handshake(
    spec: NodeSpec,
    host: string,
    port: number,
    user: string,
    sock?: Readable | Duplex,
  ): Promise<Client> {
    return new Promise<Client>((resolve, reject) => {
      let rejection: HostKeyRejection | undefined;
      let config: ConnectConfig;
      try {
        config = this.baseConfig(spec, host, port, user, (r) => {
          rejection = r;
        });
      } catch (err) {
        reject(err);
        return;
      }
      if (sock) config.sock = sock;
      const client = new Client();
      let settled = false;
      client.once('ready', () => {
        settled = true;
        resolve(client);
      });
      client.on('error', (err: Error & { level?: string; code?: string }) => {
        if (settled) return; // later errors surface through 'close' and the channel that was using it
        settled = true;
        client.end();
        if (rejection) reject(rejection.error);
        else if (err.level === 'client-authentication')
          reject(
            new RemoteAuthError(
              spec.name,
              `authentication failed for ${user}@${host}:${port} (tried: key${config.password ? ', password' : ''}${config.agent ? ', agent' : ''})`,
            ),
          );
        else if (err.level === 'client-timeout')
          reject(new RemoteConnectError(spec.name, `SSH handshake with ${host}:${port} timed out`));
        else
          reject(
            new RemoteConnectError(
              spec.name,
              `cannot connect to ${host}:${port}: ${err.code ?? err.message}`,
            ),
          );
      });
      client.on('close', () => {
        if (settled) return;
        settled = true;
        reject(
          rejection?.error ??
            new RemoteConnectError(spec.name, `connection to ${host}:${port} closed during handshake`),
        );
      });
      client.connect(config);
    });
  }
}

/** One SSH connection on the way to a node: a jump host, or the node itself (the last leg). */
interface Leg {
  name: string;
  host: string;
  port: number;
  user: string;
  identityFile?: string;
  proxyCommand?: string;
}

/** The legs to a node: its jump hosts (resolved, or parsed from `proxyJump`), then the node. */
export function routeOf(spec: NodeSpec): Leg[] {
  const hops: SshHop[] =
    spec.jumpHosts ??
    (spec.proxyJump
      ? parseJumpChain(spec.proxyJump).map((j) => ({
          alias: j.host,
          host: j.host,
          port: j.port ?? 22,
          user: j.user ?? spec.user,
        }))
      : []);
  const legs: Leg[] = hops.map((h, i) => ({
    name: `${spec.name} (jump ${h.alias})`,
    host: h.host,
    port: h.port,
    user: h.user,
    ...(h.identityFile && { identityFile: h.identityFile }),
    ...(i === 0 && h.proxyCommand && { proxyCommand: h.proxyCommand }),
  }));
  legs.push({
    name: spec.name,
    host: spec.host,
    port: spec.port,
    user: spec.user,
    ...(spec.identityFile && { identityFile: spec.identityFile }),
    ...(hops.length === 0 && spec.proxyCommand && { proxyCommand: spec.proxyCommand }),
  });
  return legs;
}

/** A tunnel from `via` to the next leg's SSH port. */
function forward(via: Client, from: Leg, to: Leg, node: string): Promise<Duplex> {
  return new Promise<Duplex>((resolve, reject) =>
    via.forwardOut('127.0.0.1', 0, to.host, to.port, (err, stream) =>
      err
        ? reject(
            new RemoteConnectError(
              node,
              `jump host ${from.host}:${from.port} cannot reach ${to.host}:${to.port}: ${err.message}`,
            ),
          )
        : resolve(stream),
    ),
  );
}

interface ProxyProcess {
  socket: Duplex;
  /** Why the command stopped (exit code, last stderr line), waiting briefly for it; undefined if it runs. */
  failure(): Promise<string | undefined>;
  kill(): void;
}

/**
 * OpenSSH's ProxyCommand tokens: %h, %p, %r and %%. Host, port and user come from an inventory or a
 * ledger, so each is quoted (`shellQuote`) before it reaches the shell: `x$(cmd)` stays a host name.
 */
export function proxyCommandLine(command: string, leg: Pick<Leg, 'host' | 'port' | 'user'>): string {
  return command.replace(/%([hpr%])/g, (_, c: string) =>
    c === 'h'
      ? shellQuote(leg.host)
      : c === 'p'
        ? shellQuote(leg.port)
        : c === 'r'
          ? shellQuote(leg.user)
          : '%',
  );
}

/** Starts a ProxyCommand as OpenSSH does (`sh -c 'exec COMMAND'`); its stdin/stdout is the socket. */
function startProxyCommand(node: string, leg: Leg): ProxyProcess {
  // The last gate: whatever file the command came from, it runs only with --allow-proxy-command.
  if (!proxyCommandsAllowed())
    throw new UserError(
      `${node}: ProxyCommand ${JSON.stringify(leg.proxyCommand)} refused: pass --allow-proxy-command to run it`,
    );
  const line = proxyCommandLine(leg.proxyCommand as string, leg);
  const child = spawn('/bin/sh', ['-c', `exec ${line}`], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let ended: string | undefined;
  child.stderr.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-2000);
  });
  child.on('error', (err) => {
    ended = `ProxyCommand ${JSON.stringify(line)} could not start: ${err.message}`;
  });
  child.on('exit', (code, signal) => {
    const last = stderr.trim().split('\n').pop();
    ended = `ProxyCommand ${JSON.stringify(line)} exited (${signal ?? `code ${code}`})${last ? `: ${last}` : ''}`;
  });
  const socket = Duplex.from({ readable: child.stdout, writable: child.stdin });
  socket.on('error', () => {}); // the SSH handshake reports the failure, with failure() as the reason
  log().debug({ node, command: line }, 'ProxyCommand started');
  return {
    socket,
    failure: async () => {
      if (ended === undefined && child.exitCode === null && child.signalCode === null)
        await Promise.race([once(child, 'exit'), sleep(500)]);
      return ended;
    },
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    },
  };
}
