import { clusterAddress } from '../src/core/control/addresses.ts';
import { shellQuote } from '../src/core/control/quote.ts';
import type { Remote } from '../src/core/control/types.ts';

/**
 * Victim-side network probe: a TCP connect from one node to a peer's port, run on the node itself with
 * bash's /dev/tcp under `timeout` (no nc/socat needed). The outcome separates a dropped SYN (timeout:
 * the partition holds) from a refused connect (packets flow; nothing listens) and a success.
 */
export type ConnectOutcome = 'connected' | 'refused' | 'timeout' | 'error';

export interface ConnectProbe {
  from: string;
  to: string;
  address: string;
  port: number;
  outcome: ConnectOutcome;
  ms: number;
}

const MARK = 'FLPROBE';

export function connectProbeCommand(address: string, port: number, timeoutMs: number): string {
  const secs = (timeoutMs / 1000).toFixed(3);
  const target = `/dev/tcp/${address.includes(':') ? address : address}/${port}`;
  // exit 124 = timed out; otherwise bash reports "Connection refused" on stderr.
  const inner = `exec 3<>${target} && echo ${MARK}:connected`;
  return `timeout ${secs} bash -c ${shellQuote(inner)} 2>&1; echo ${MARK}:rc=$?`;
}

export function parseConnectProbe(output: string): ConnectOutcome {
  if (output.includes(`${MARK}:connected`)) return 'connected';
  if (/Connection refused/i.test(output)) return 'refused';
  const rc = /FLPROBE:rc=(\d+)/.exec(output)?.[1];
  if (rc === '124') return 'timeout';
  return 'error';
}

export async function probeConnect(
  remote: Remote,
  from: string,
  to: string,
  address: string,
  port: number,
  timeoutMs = 150,
): Promise<ConnectProbe> {
  const t0 = performance.now();
  const r = await remote.exec(from, connectProbeCommand(address, port, timeoutMs), {
    check: false,
    timeoutMs: timeoutMs + 5000,
  });
  return {
    from,
    to,
    address,
    port,
    outcome: parseConnectProbe(`${r.stdout}\n${r.stderr}`),
    ms: Math.round(performance.now() - t0),
  };
}

/** A link is reachable when packets come back: a connect or a refusal. */
export function reachable(o: ConnectOutcome): boolean {
  return o === 'connected' || o === 'refused';
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/**
 * The address peers use to reach a node (its cluster address, never the SSH address, which may be a port
 * forward on the control host): as an IP literal when the inventory gives one, else resolved on the node
 * itself (getent).
 */
export async function nodeAddress(remote: Remote, node: string): Promise<string> {
  const address = clusterAddress(remote.node(node));
  if (IPV4.test(address) || address.includes(':')) return address;
  const r = await remote.exec(node, `getent ahostsv4 ${shellQuote(address)} | head -1`, { check: false });
  const ip = r.stdout.trim().split(/\s+/)[0];
  if (!ip || !IPV4.test(ip)) throw new Error(`${node}: cannot resolve ${address} to an address`);
  return ip;
}

export async function nodeAddresses(
  remote: Remote,
  nodes: readonly string[],
): Promise<Record<string, string>> {
  const entries = await Promise.all(nodes.map(async (n) => [n, await nodeAddress(remote, n)] as const));
  return Object.fromEntries(entries);
}
