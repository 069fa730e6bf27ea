import type { ScenarioEvidence, SeedMeasurement } from './evidence.ts';

/**
 * Every seed judged, not only the first. A scenario's evidence carries each seed's own measurement
 * (`perSeed`); the decision tree and the audits judge each seed as if it were the only run and combine
 * the results: a fault that did not land in any seed, a rate collapse or a slow recovery in any seed,
 * counts. With one seed (or evidence recorded before per-seed measurements) the one view is the
 * evidence itself, so single-seed judgement is unchanged.
 */
export interface SeedView {
  /** Null when the evidence has one run only (nothing to name). */
  seed: number | string | null;
  ev: ScenarioEvidence;
}

export function seedViews(ev: ScenarioEvidence): SeedView[] {
  if (ev.perSeed.length <= 1) return [{ seed: null, ev }];
  return ev.perSeed.map((m) => ({ seed: m.seed, ev: asEvidence(ev, m) }));
}

/** The scenario's evidence with one seed's measurement in place of the primary run's. */
function asEvidence(ev: ScenarioEvidence, m: SeedMeasurement): ScenarioEvidence {
  return {
    ...ev,
    ran: {
      ...ev.ran,
      durationS: m.durationS,
      topologies: m.faults.filter((f) => f.landed && f.topology).map((f) => f.topology as string),
    },
    faults: m.faults,
    oracles: m.oracles,
    history: m.history,
    throughput: m.throughput,
    recovery: m.recovery,
    sutLog: m.sutLog,
    failovers: m.failovers,
    runDir: m.runDir,
  };
}

/** "seed 7: " before a line about one seed's run; nothing when there is one run. */
export function seedPrefix(seed: SeedView['seed']): string {
  return seed === null ? '' : `seed ${seed}: `;
}
