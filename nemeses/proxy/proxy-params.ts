import { z } from 'zod';
import { RATE_PATTERN } from '../commands/tc.ts';
import { duration, foldDurations } from '../params.ts';
import type { ProxyAction, ProxyFaultParams } from './hub.ts';

/**
 * A proxy step's params, typed per action, with units: durations as "100ms" / "2s" (or `…Ms` numbers),
 * rates as tc spells them ("1mbit", "64kbps"), sizes in bytes. The output is the shape the proxy reads
 * (ProxyFaultParams), and parses again unchanged, so a reduced schedule replays.
 */

const BYTES_PER_UNIT: Readonly<Record<string, number>> = {
  bit: 1 / 8,
  kbit: 1000 / 8,
  mbit: 1_000_000 / 8,
  gbit: 1_000_000_000 / 8,
  bps: 1,
  kbps: 1000,
  mbps: 1_000_000,
};

/** "1mbit" → 125000 bytes per second. */
export function bytesPerSecond(rate: string): number {
  const m = /^(\d+(?:\.\d+)?)([a-z]+)$/i.exec(rate);
  const unit = BYTES_PER_UNIT[(m?.[2] ?? '').toLowerCase()];
  if (!m || unit === undefined) throw new Error(`not a rate: ${rate}`);
  return Number(m[1]) * unit;
}

const empty = z.strictObject({}).default({});
const ms = (n: number) => z.number().min(n).max(600_000);

export const proxyParams: Record<ProxyAction, z.ZodType<ProxyFaultParams>> = {
  latency: z
    .strictObject({ ...duration('delay'), ...duration('jitter') })
    .default({})
    .transform(foldDurations(['delay', 'jitter']))
    .transform((p) => ({ ...p, delayMs: (p as ProxyFaultParams).delayMs ?? 100 }))
    .pipe(z.strictObject({ delayMs: ms(0), jitterMs: ms(0).optional() })),
  bandwidth: z
    .strictObject({
      rate: z.string().regex(RATE_PATTERN, 'a rate with its unit: 1mbit, 500kbit, 64kbps …').optional(),
      bytesPerSecond: z.number().positive().optional(),
    })
    .default({})
    .transform(({ rate, bytesPerSecond: b }, ctx) => {
      if (rate !== undefined && b !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['rate'], message: 'give rate or bytesPerSecond, not both' });
        return z.NEVER;
      }
      return { bytesPerSecond: b ?? bytesPerSecond(rate ?? '8kbps') };
    }),
  blackhole: empty,
  reset: empty,
  /**
   * `clients`: the client group cut from the target nodes (client threads, 0-based); absent: every client.
   * `links: peers`: the target members cut from the others instead (their peer traffic through the proxy).
   */
  partition: z
    .strictObject({
      clients: z
        .array(z.number().int().min(0).max(10_000))
        .min(1, 'name at least one client thread')
        .transform((xs) => [...new Set(xs)].sort((a, b) => a - b))
        .optional(),
      links: z.enum(['clients', 'peers']).optional(),
    })
    .default({})
    .superRefine((p, ctx) => {
      if (p.links === 'peers' && p.clients)
        ctx.addIssue({
          code: 'custom',
          path: ['clients'],
          message:
            'a client group cuts client links; links: peers cuts the members from each other (give one)',
        });
    })
    .transform(({ links, ...p }) => (links === 'peers' ? { ...p, links } : p)),
  'half-open': z.strictObject({ direction: z.enum(['upstream', 'downstream']).default('upstream') }).default({
    direction: 'upstream',
  }),
  slice: z
    .strictObject({
      sliceBytes: z
        .number()
        .int()
        .min(1)
        .max(1 << 20)
        .default(8),
      ...duration('sliceDelay'),
    })
    .default({ sliceBytes: 8 })
    .transform(foldDurations(['sliceDelay']))
    .transform((p) => ({ ...p, sliceDelayMs: (p as ProxyFaultParams).sliceDelayMs ?? 5 }))
    .pipe(z.strictObject({ sliceBytes: z.number().int().min(1), sliceDelayMs: ms(0) })),
  timeout: z
    .strictObject({ ...duration('after') })
    .default({})
    .transform(foldDurations(['after']))
    .transform((p) => ({ afterMs: (p as ProxyFaultParams).afterMs ?? 1000 }))
    .pipe(z.strictObject({ afterMs: ms(1) })),
};
