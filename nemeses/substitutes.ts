/**
 * The one table of fault behaviours a host may lack the native mechanism for, and the substitute (if
 * any) that reproduces the behaviour the step asks for. A substitute is used only where it produces the
 * same observable behaviour (random loss by random drop, a bandwidth cap by another shaper, a clock
 * offset by an offset the process reads): a delay is never emulated by loss or a rate. A behaviour with
 * no substitute names the capability that is missing, and the scenario is INCONCLUSIVE-env.
 *
 * What a fault window used is recorded with it (FaultRecord.substitutions), shown in the report and
 * report.json, and judged by red flag 4.
 */

import { z } from 'zod';

/** One substitution as read back from a ledger or report.json: exactly the fields below, nothing else. */
export const substitutionSchema = z.strictObject({
  asked: z.string(),
  applied: z.string(),
  reproduces: z.string(),
  cannot: z.string(),
});

/** One substitution, as recorded per fault window. */
export interface Substitution {
  /** The behaviour the step asked for and its native mechanism ("packet loss by tc netem"). */
  asked: string;
  /** What was applied instead. */
  applied: string;
  /** What the substitute does reproduce of the asked behaviour. */
  reproduces: string;
  /** What it cannot reproduce: what the run does not test when it is used. */
  cannot: string;
}

export interface SubstituteRow {
  /** `<nemesis kind> <behaviour or action>`, e.g. `packet delay`, `clock bump`, `disk flakey`. */
  behaviour: string;
  /** The native mechanism. */
  native: string;
  /** The capability the native mechanism needs (what INCONCLUSIVE-env names when nothing fits). */
  needs: string;
  /** The capability probe that answers `needs` (the session's probe keys), when one exists. */
  probe?: string;
  /** The substitute, or null: none reproduces this behaviour. `probe`: the probe its own need answers to. */
  substitute: (Omit<Substitution, 'asked'> & { needs: string; probe?: string }) | null;
  /** Why there is none (for a null substitute). */
  noSubstitute?: string;
}

const NETEM = 'the netem qdisc (sch_netem, CONFIG_NET_SCH_NETEM)';
const CLOCK_SUBSTITUTE = {
  applied: "libfaketime preloaded into the database's processes (the faketime rc file moved)",
  needs: 'libfaketime',
  reproduces:
    'the clock offset as the database process reads it through libc (time, gettimeofday, clock_gettime REALTIME)',
  cannot:
    "binaries that read the clock without libc (static and Go binaries: etcd), the node's kernel timers, and every other process on the node",
};

export const SUBSTITUTES: readonly SubstituteRow[] = [
  {
    behaviour: 'packet loss',
    native: 'tc netem loss',
    needs: NETEM,
    probe: 'doctor:netem',
    substitute: {
      applied: 'iptables statistic match, random DROP to and from the target peers',
      needs: 'iptables statistic match',
      probe: 'doctor:iptables',
      reproduces: 'independent random loss of the asked share of packets between the targets and their peers',
      cannot: "netem's loss correlation (bursts) and loss inside the qdisc (the drop is in netfilter)",
    },
  },
  {
    behaviour: 'packet rate',
    native: 'tc netem rate',
    needs: NETEM,
    probe: 'doctor:netem',
    substitute: {
      applied: 'tc tbf under prio (or htb) classes for the target peers',
      needs: 'tc tbf with prio or htb',
      reproduces: 'a bandwidth cap on traffic to the target peers',
      cannot:
        "netem's packet-overhead and cell accounting; tbf's queue limit drops instead of delaying past it",
    },
  },
  {
    behaviour: 'packet delay',
    native: 'tc netem delay',
    needs: NETEM,
    probe: 'doctor:netem',
    substitute: null,
    noSubstitute:
      'nothing else on Linux holds packets for a time; loss or a rate cap would test something else',
  },
  {
    behaviour: 'packet corrupt',
    native: 'tc netem corrupt',
    needs: NETEM,
    probe: 'doctor:netem',
    substitute: null,
    noSubstitute: 'no other qdisc or netfilter target flips bits in a packet',
  },
  {
    behaviour: 'packet duplicate',
    native: 'tc netem duplicate',
    needs: NETEM,
    probe: 'doctor:netem',
    substitute: null,
    noSubstitute: 'no other qdisc or netfilter target sends a packet twice',
  },
  {
    behaviour: 'packet reorder',
    native: 'tc netem reorder',
    needs: NETEM,
    probe: 'doctor:netem',
    substitute: null,
    noSubstitute: 'reordering needs netem delay, which has no substitute',
  },
  ...['bump', 'strobe', 'scramble', 'reset'].map((a) => ({
    behaviour: `clock ${a}`,
    native: "settime on the node's own kernel clock",
    needs: 'a kernel clock of its own per node (a VM or a lab host)',
    substitute: CLOCK_SUBSTITUTE,
  })),
  {
    behaviour: 'disk flakey',
    native: 'device-mapper dm-flakey (drop_writes, error_writes)',
    needs: 'device-mapper with the dm-flakey target (dmsetup)',
    probe: 'doctor:dm-flakey',
    substitute: null,
    noSubstitute:
      'lazyfs loses unsynced writes on a crash, which is another fault: failing or dropping every write at the block layer has no substitute',
  },
];

/** The row of a behaviour (`packet delay`, `clock bump` …), if the table has one. */
export function substituteRow(behaviour: string): SubstituteRow | undefined {
  return SUBSTITUTES.find((r) => r.behaviour === behaviour);
}

/** The substitution recorded for a behaviour that was substituted (throws when it has none). */
export function substitutionFor(behaviour: string): Substitution {
  const row = substituteRow(behaviour);
  if (!row?.substitute) throw new Error(`${behaviour}: no substitute reproduces it`);
  const { needs: _needs, probe: _probe, ...s } = row.substitute;
  return { asked: `${row.behaviour} by ${row.native}`, ...s };
}

/** One line for a report: asked → applied (reproduces …; cannot …). */
export function describeSubstitution(s: Substitution): string {
  return `${s.asked} → ${s.applied} (reproduces: ${s.reproduces}; cannot: ${s.cannot})`;
}

/** The behaviour a nemesis step asks for, as the table names it (`packet delay`, `clock bump` …). */
export function stepBehaviour(step: { kind: string; action?: string; behaviour?: string }): string {
  return `${step.kind} ${step.behaviour ?? step.action ?? 'start'}`;
}
