import { shellQuote } from '../../src/core/control/quote.ts';

/**
 * tc command builders for per-destination packet faults. The root qdisc faultline installs always has
 * handle fa1: so a sweep can tell it from anyone else's; its shaped band is fa1:4 with the child qdisc
 * fa14:. With netem: prio (4 bands) + netem on band 4 + u32 filters per destination (Jepsen's layout).
 * Without prio, htb classes stand in for the bands (default class fa1:1 unshaped).
 */
export const ROOT_HANDLE = 'fa1:';
export const BAND = 'fa1:4';
export const CHILD_HANDLE = 'fa14:';
export const QDISC_KINDS = ['netem', 'prio', 'htb', 'tbf'] as const;

export interface NetemDelay {
  timeMs: number;
  jitterMs?: number;
  correlation?: number;
  distribution?: 'uniform' | 'normal' | 'pareto' | 'paretonormal';
}
export interface PercentFault {
  percent: number;
  correlation?: number;
}
export interface Behaviors {
  delay?: NetemDelay;
  loss?: PercentFault;
  corrupt?: PercentFault;
  duplicate?: PercentFault;
  reorder?: PercentFault;
  /** e.g. "1mbit" */
  rate?: string;
}

/** Jepsen's defaults for `:behaviors`. */
export const DEFAULT_BEHAVIORS: Required<Omit<Behaviors, 'rate'>> & { rate: string } = {
  delay: { timeMs: 50, jitterMs: 10, correlation: 25, distribution: 'normal' },
  loss: { percent: 20, correlation: 75 },
  corrupt: { percent: 20, correlation: 75 },
  duplicate: { percent: 20, correlation: 75 },
  reorder: { percent: 20, correlation: 75 },
  rate: '1mbit',
};

/** A rate tc understands, with its unit: the only form a rate may take on a root command line. */
export const RATE_PATTERN = /^\d+(?:\.\d+)?(?:bit|kbit|mbit|gbit|bps|kbps|mbps)$/i;

/**
 * A number for a tc argument, or a refusal: the schema already types plan params, and this guard keeps
 * anything that is not a finite number in range (a string like "1; touch pwned") off a root command.
 */
export function tcNumber(value: unknown, what: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max)
    throw new RangeError(`tc: ${what} must be a number in [${min}, ${max}], got ${JSON.stringify(value)}`);
  return value;
}

export function tcRate(value: unknown): string {
  if (typeof value !== 'string' || !RATE_PATTERN.test(value))
    throw new RangeError(
      `tc: rate must be a number with a unit (1mbit, 500kbit …), got ${JSON.stringify(value)}`,
    );
  return value;
}

const DISTRIBUTIONS = ['uniform', 'normal', 'pareto', 'paretonormal'];

const pct = (p: PercentFault, what: string) =>
  `${tcNumber(p.percent, `${what} percent`, 0, 100)}%${p.correlation !== undefined ? ` ${tcNumber(p.correlation, `${what} correlation`, 0, 100)}%` : ''}`;

/** netem's argument list for the requested behaviours (reorder needs a delay: Jepsen adds one). */
export function netemArgs(b: Behaviors): string {
  const parts: string[] = [];
  const delay = b.delay ?? (b.reorder ? DEFAULT_BEHAVIORS.delay : undefined);
  if (delay) {
    parts.push(`delay ${tcNumber(delay.timeMs, 'delay timeMs')}ms`);
    if (delay.jitterMs !== undefined) parts.push(`${tcNumber(delay.jitterMs, 'delay jitterMs')}ms`);
    if (delay.correlation !== undefined)
      parts.push(`${tcNumber(delay.correlation, 'delay correlation', 0, 100)}%`);
    if (delay.distribution && delay.jitterMs) {
      if (!DISTRIBUTIONS.includes(delay.distribution))
        throw new RangeError(`tc: unknown delay distribution ${JSON.stringify(delay.distribution)}`);
      parts.push(`distribution ${delay.distribution}`);
    }
  }
  if (b.loss) parts.push(`loss ${pct(b.loss, 'loss')}`);
  if (b.corrupt) parts.push(`corrupt ${pct(b.corrupt, 'corrupt')}`);
  if (b.duplicate) parts.push(`duplicate ${pct(b.duplicate, 'duplicate')}`);
  if (b.reorder) parts.push(`reorder ${pct(b.reorder, 'reorder')}`);
  if (b.rate) parts.push(`rate ${tcRate(b.rate)}`);
  return parts.join(' ');
}

function filters(dev: string, destinations: readonly string[]): string[] {
  return destinations.map(
    (ip) =>
      `tc filter add dev ${shellQuote(dev)} parent ${ROOT_HANDLE}0 protocol ${ip.includes(':') ? 'ipv6' : 'ip'} prio 1 u32 match ${ip.includes(':') ? 'ip6' : 'ip'} dst ${shellQuote(ip.includes('/') ? ip : `${ip}/${ip.includes(':') ? 128 : 32}`)} flowid ${BAND}`,
  );
}

/** prio + netem + filters. */
export function netemScript(dev: string, destinations: readonly string[], b: Behaviors): string {
  const d = shellQuote(dev);
  return [
    `tc qdisc replace dev ${d} root handle ${ROOT_HANDLE} prio bands 4 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1`,
    `tc qdisc add dev ${d} parent ${BAND} handle ${CHILD_HANDLE} netem ${netemArgs(b)}`,
    ...filters(dev, destinations),
  ].join(' && \\\n');
}

/** The tbf bucket: this much passes at line rate before the shaping bites (probes must send more). */
export const TBF_BURST_BYTES = 16 * 1024;

/** Rate without netem: tbf on the shaped band, under prio when present, else under htb classes. */
export function tbfScript(
  dev: string,
  destinations: readonly string[],
  rate: string,
  havePrio: boolean,
): string {
  const d = shellQuote(dev);
  const root = havePrio
    ? [
        `tc qdisc replace dev ${d} root handle ${ROOT_HANDLE} prio bands 4 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1`,
      ]
    : [
        `tc qdisc replace dev ${d} root handle ${ROOT_HANDLE} htb default 1`,
        `tc class add dev ${d} parent ${ROOT_HANDLE} classid fa1:1 htb rate 10gbit`,
        `tc class add dev ${d} parent ${ROOT_HANDLE} classid ${BAND} htb rate 10gbit`,
      ];
  return [
    ...root,
    `tc qdisc add dev ${d} parent ${BAND} handle ${CHILD_HANDLE} tbf rate ${tcRate(rate)} burst ${TBF_BURST_BYTES} latency 2s`,
    ...filters(dev, destinations),
  ].join(' && \\\n');
}

/** Remove faultline's root qdisc from a device (only when it is ours). */
export function removeRootScript(dev: string): string {
  const d = shellQuote(dev);
  return `if tc qdisc show dev ${d} root 2>/dev/null | grep -q ' ${ROOT_HANDLE} root'; then tc qdisc del dev ${d} root; fi; true`;
}

/** Lines `DEV: qdisc …` for every device whose root qdisc is faultline's. */
export function listFaultlineQdiscsScript(): string {
  return `for d in $(ls /sys/class/net); do tc qdisc show dev "$d" root 2>/dev/null | grep ' ${ROOT_HANDLE} root' | sed "s|^|$d: |"; done; true`;
}

/** The current root qdisc: `kind handle` (e.g. `noqueue 0:`). */
export function rootQdiscScript(dev: string): string {
  return `tc qdisc show dev ${shellQuote(dev)} root | head -1 | awk '{print $2, $3}'`;
}

/** A root qdisc faultline may replace: the kernel's defaults, never someone's configuration. */
export function isDefaultRoot(kindHandle: string): boolean {
  const [kind, handle] = kindHandle.trim().split(/\s+/);
  if (handle === ROOT_HANDLE) return true;
  return handle === '0:' && ['noqueue', 'pfifo_fast', 'fq_codel', 'mq', 'fq', 'pfifo'].includes(kind ?? '');
}

/**
 * Which qdisc kinds this kernel has, tried on a throwaway veth pair in the node's network namespace
 * (nothing real is touched). Prints `KIND=yes|no` lines, `veth=no` if even the probe device fails.
 */
export function qdiscProbeScript(): string {
  const tries: Record<string, string> = {
    netem: 'netem delay 1ms',
    prio: 'prio bands 4',
    htb: 'htb default 1',
    tbf: 'tbf rate 1mbit burst 32kbit latency 400ms',
  };
  return [
    'p=flcap$$',
    'if ! ip link add "$p"a type veth peer name "$p"b 2>/dev/null; then echo veth=no; exit 0; fi',
    ...Object.entries(tries).map(
      ([k, q]) =>
        `if tc qdisc add dev "$p"a root handle 1: ${q} 2>/tmp/.flcap-err-$$; then echo ${k}=yes; tc qdisc del dev "$p"a root; else echo "${k}=no $(head -1 /tmp/.flcap-err-$$)"; fi`,
    ),
    'rm -f /tmp/.flcap-err-$$',
    'ip link del "$p"a 2>/dev/null; true',
  ].join('\n');
}

export function parseQdiscProbe(text: string): {
  veth: boolean;
  kinds: Record<string, { ok: boolean; error?: string }>;
} {
  const lines = text.split('\n');
  const kinds: Record<string, { ok: boolean; error?: string }> = {};
  for (const l of lines) {
    const m = /^(\w+)=(yes|no)\s*(.*)$/.exec(l.trim());
    if (m && m[1] !== 'veth')
      kinds[m[1] as string] = { ok: m[2] === 'yes', ...(m[2] === 'no' && m[3] ? { error: m[3] } : {}) };
  }
  return { veth: !lines.includes('veth=no'), kinds };
}

export interface QdiscStats {
  handle: string;
  kind: string;
  sentBytes: number;
  sentPackets: number;
  dropped: number;
  overlimits: number;
}

/** Parses `tc -s qdisc show dev X`. */
export function parseQdiscStats(text: string): QdiscStats[] {
  const out: QdiscStats[] = [];
  let cur: QdiscStats | null = null;
  for (const line of text.split('\n')) {
    const head = /^qdisc (\S+) (\S+)/.exec(line);
    if (head) {
      cur = {
        kind: head[1] as string,
        handle: head[2] as string,
        sentBytes: 0,
        sentPackets: 0,
        dropped: 0,
        overlimits: 0,
      };
      out.push(cur);
      continue;
    }
    const sent = /Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+)/.exec(line);
    if (sent && cur) {
      cur.sentBytes = Number(sent[1]);
      cur.sentPackets = Number(sent[2]);
      cur.dropped = Number(sent[3]);
      cur.overlimits = Number(sent[4]);
    }
  }
  return out;
}
