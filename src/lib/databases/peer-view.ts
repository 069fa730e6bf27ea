import { shellQuote } from '../../core/control/quote.ts';
import type { DbContext, PeerView } from './types.ts';

/**
 * A member as one of its peers sees it: a probe run on the peer node itself, across the cluster network
 * (not from the control host), so it sees what the database's own members see. The probe's exit status
 * tells "down" (refused, no answer) apart from "could not tell" (the tool missing on the peer), which is
 * never read as down.
 */

const MARK = 'FLPEER';
/** How long the peer waits for an answer: a paused member never answers. */
export const PEER_PROBE_TIMEOUT_S = 2;

/** Exit statuses that mean the member did not answer: refused, timed out, connection dropped. */
const CURL_DOWN = new Set([7, 28, 52, 55, 56]);

/** `curl URL` on the peer, printing the body then `FLPEER rc=N`. */
export function curlProbeCommand(url: string): string {
  return `curl -sS -m ${PEER_PROBE_TIMEOUT_S} ${shellQuote(url)} 2>&1; echo " ${MARK} rc=$?"`;
}

/** A command's output split into its text and the exit status the probe appended. */
function split(out: string): { text: string; rc: number | null } {
  const m = new RegExp(`\\s*${MARK} rc=(\\d+)\\s*$`).exec(out);
  const rc = m ? Number(m[1]) : null;
  return { text: (m ? out.slice(0, m.index) : out).trim().slice(0, 200), rc };
}

/** etcd's /health of a member, asked from a peer: `{"health":"true"}` is up, no answer is down. */
export function parseEtcdHealth(out: string): PeerView {
  const { text, rc } = split(out);
  if (rc === 0) {
    const healthy = /"health"\s*:\s*"?true"?/.test(text);
    return { up: healthy, detail: healthy ? text : `unhealthy: ${text}` };
  }
  if (rc !== null && CURL_DOWN.has(rc)) return { up: false, detail: `no answer (curl exit ${rc}: ${text})` };
  return { up: null, detail: `peer could not probe (exit ${rc ?? '?'}: ${text || 'no output'})` };
}

/** `redis-cli PING` of a member from a peer, bounded by `timeout`. */
export function redisPingCommand(address: string, port: number): string {
  return `timeout ${PEER_PROBE_TIMEOUT_S} redis-cli -h ${shellQuote(address)} -p ${port} PING 2>&1; echo " ${MARK} rc=$?"`;
}

/** PONG is up; a refusal, a timeout or LOADING (not serving yet) is down; a missing redis-cli is unknown. */
export function parseRedisPing(out: string): PeerView {
  const { text, rc } = split(out);
  if (rc === 127 || /command not found|No such file/i.test(text))
    return { up: null, detail: `peer could not probe (${text || 'redis-cli missing'})` };
  if (/^PONG\b/m.test(text)) return { up: true, detail: 'PONG' };
  if (rc === 124) return { up: false, detail: `no answer in ${PEER_PROBE_TIMEOUT_S} s` };
  if (/refused|could not connect|LOADING|Connection reset/i.test(text)) return { up: false, detail: text };
  return { up: null, detail: `unexpected answer (exit ${rc ?? '?'}: ${text})` };
}

/** Run a peer probe on `observer` and parse it; an SSH failure is "could not tell". */
export async function peerProbe(
  ctx: DbContext,
  observer: string,
  command: string,
  parse: (out: string) => PeerView,
): Promise<PeerView> {
  try {
    const r = await ctx.remote.exec(observer, command, {
      check: false,
      timeoutMs: (PEER_PROBE_TIMEOUT_S + 10) * 1000,
    });
    return parse(`${r.stdout}${r.stderr}`);
  } catch (err) {
    return { up: null, detail: `peer ${observer} unreachable: ${(err as Error).message}` };
  }
}
