import { shellQuote } from '../../src/core/control/quote.ts';
import type { Behaviors } from './tc.ts';

/**
 * The victim's view of a netem fault: ICMP echo from a shaped node to one of its destinations. The
 * echo requests pass the same u32 filter as any other packet to that address, so the RTT, loss and
 * duplicate counts ping reports are what the shaping does to real traffic.
 */
export interface PingStats {
  sent: number;
  received: number;
  duplicates: number;
  lossPercent: number;
  minMs: number | null;
  avgMs: number | null;
  maxMs: number | null;
}

/** `count` echoes `intervalS` apart, each `size` bytes of payload; never fails (stats are parsed). */
export function pingCommand(address: string, count: number, intervalS = 0.1, size = 56): string {
  return `LC_ALL=C ping -n -q -c ${count} -i ${intervalS} -W 2 -s ${size} ${shellQuote(address)} 2>&1; true`;
}

export function parsePing(text: string): PingStats | null {
  const head =
    /(\d+) packets transmitted, (\d+) received(?:, \+(\d+) duplicates)?(?:, \+\d+ errors)?, ([\d.]+)% packet loss/.exec(
      text,
    );
  if (!head) return null;
  const rtt = /= ([\d.]+)\/([\d.]+)\/([\d.]+)\//.exec(text);
  return {
    sent: Number(head[1]),
    received: Number(head[2]),
    duplicates: Number(head[3] ?? 0),
    lossPercent: Number(head[4]),
    minMs: rtt ? Number(rtt[1]) : null,
    avgMs: rtt ? Number(rtt[2]) : null,
    maxMs: rtt ? Number(rtt[3]) : null,
  };
}

/** Echo payload for the rate probe: big enough that serialising it at `rate` takes ≥ ~60 ms. */
export const RATE_PROBE_BYTES = 8000;

/**
 * Whether the victim's ping shows each requested behaviour, against a baseline ping taken before the
 * fault: delay raises the average RTT by at least half the delay; loss and corrupt lose echoes (a
 * corrupted packet fails its checksum and is dropped); duplicate shows duplicates; reorder (which rides
 * on a delay) lets some echoes through undelayed while others wait; rate stretches a large echo.
 */
export function netemVictimVerdict(
  b: Behaviors,
  base: PingStats | null,
  during: PingStats | null,
  rateProbe: PingStats | null,
  rateBps: number | null,
): { landed: boolean; why: string[] } {
  const why: string[] = [];
  const ok: boolean[] = [];
  if (!during) return { landed: false, why: ['ping gave no statistics (is iputils-ping installed?)'] };
  const baseAvg = base?.avgMs ?? 0;
  if (b.delay && !b.reorder) {
    const hit = during.avgMs !== null && during.avgMs >= baseAvg + b.delay.timeMs * 0.5;
    ok.push(hit);
    why.push(`delay: avg RTT ${baseAvg}→${during.avgMs} ms (want ≥ +${b.delay.timeMs * 0.5})`);
  }
  if (b.loss || b.corrupt) {
    const hit = during.received < during.sent;
    ok.push(hit);
    why.push(`${b.loss ? 'loss' : 'corrupt'}: ${during.sent - during.received}/${during.sent} echoes lost`);
  }
  if (b.duplicate) {
    ok.push(during.duplicates > 0);
    why.push(`duplicate: ${during.duplicates} duplicate replies`);
  }
  if (b.reorder) {
    const delay = (b.delay ?? { timeMs: 50 }).timeMs;
    const hit =
      during.minMs !== null && during.maxMs !== null && during.minMs < delay / 2 && during.maxMs >= delay / 2;
    ok.push(hit);
    why.push(`reorder: RTT min ${during.minMs} / max ${during.maxMs} ms around a ${delay} ms delay`);
  }
  if (b.rate && rateBps) {
    const expectMs = ((RATE_PROBE_BYTES * 8) / rateBps) * 1000 * 0.5;
    const hit = rateProbe?.avgMs != null && rateProbe.avgMs >= expectMs;
    ok.push(hit);
    why.push(
      `rate: ${RATE_PROBE_BYTES}-byte echo RTT ${rateProbe?.avgMs ?? '?'} ms (want ≥ ${Math.round(expectMs)})`,
    );
  }
  return { landed: ok.length > 0 && ok.every(Boolean), why };
}
