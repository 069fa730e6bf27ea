/**
 * The consistency-model lattice as data, and the two computations Elle does over it:
 * `prohibitedAnomalies` (what a set of requested models forbids) and `boundary` (the weakest models a set
 * of found anomalies rules out, `not`, and every other model it rules out, `alsoNot`).
 *
 * The data follows Adya's levels plus the session/realtime ("strong") variants and several later models;
 * its quirks are kept on purpose so verdicts compare with Elle's: the anomaly implication graph names
 * `GSIb`, whereas forward-consistent-view proscribes `G-SIb`, so neither connects to the other.
 */

/** Input aliases → canonical model names. */
const MODEL_ALIASES: Record<string, string> = {
  'PL-1': 'read-uncommitted',
  'PL-2': 'read-committed',
  'PL-CS': 'cursor-stability',
  'PL-2L': 'monotonic-view',
  'PL-MSR': 'monotonic-snapshot-read',
  'PL-2+': 'consistent-view',
  'PL-FCV': 'forward-consistent-view',
  'PL-2.99': 'repeatable-read',
  'PL-SI': 'snapshot-isolation',
  'PL-3': 'serializable',
  'conflict-serializable': 'serializable',
  'PL-3U': 'update-serializable',
  'PL-SS': 'strict-serializable',
  'strong-serializable': 'strict-serializable',
  'strong-session-PL-1': 'strong-session-read-uncommitted',
  'strong-session-PL-2': 'strong-session-read-committed',
  'strong-PL-1': 'strong-read-uncommitted',
  'strong-PL-2': 'strong-read-committed',
};

/** model → the models it directly implies (a → b: every history allowed by a is allowed by b). */
const MODEL_IMPLIES: Record<string, string[]> = {
  'strict-serializable': [
    'serializable',
    'snapshot-isolation',
    'strong-snapshot-isolation',
    'strong-session-serializable',
    'linearizable',
    'session-serializable',
  ],
  'session-serializable': ['one-copy-serializable'],
  serializable: ['repeatable-read', 'snapshot-isolation', 'update-serializable', 'view-serializable'],
  'strong-session-serializable': ['serializable', 'strong-session-snapshot-isolation'],
  'strong-snapshot-isolation': ['strong-session-snapshot-isolation', 'strong-read-committed'],
  'strong-session-snapshot-isolation': ['snapshot-isolation', 'strong-session-read-committed'],
  'snapshot-isolation': [
    'forward-consistent-view',
    'monotonic-atomic-view',
    'monotonic-snapshot-read',
    'parallel-snapshot-isolation',
    'prefix',
  ],
  'update-serializable': ['forward-consistent-view'],
  'forward-consistent-view': ['consistent-view'],
  'consistent-view': ['cursor-stability', 'monotonic-view'],
  'repeatable-read': ['cursor-stability', 'monotonic-atomic-view'],
  'cursor-stability': ['read-committed'],
  'monotonic-view': ['read-committed'],
  'monotonic-snapshot-read': ['read-committed'],
  'parallel-snapshot-isolation': ['causal-cerone', 'update-atomic'],
  prefix: ['causal-cerone'],
  'causal-cerone': ['read-atomic'],
  'update-atomic': ['read-atomic'],
  'read-atomic': ['monotonic-atomic-view'],
  'monotonic-atomic-view': ['read-committed'],
  'read-committed': ['read-uncommitted'],
  'strong-read-committed': ['strong-session-read-committed', 'strong-read-uncommitted'],
  'strong-read-uncommitted': ['strong-session-read-uncommitted'],
  'strong-session-read-committed': ['read-committed', 'strong-session-read-uncommitted'],
  'strong-session-read-uncommitted': ['read-uncommitted'],
  linearizable: ['sequential'],
  sequential: ['causal'],
  causal: ['writes-follow-reads', 'PRAM'],
  PRAM: ['monotonic-reads', 'monotonic-writes', 'read-your-writes'],
};

/** Anomalies each model adds to what the models it implies already forbid. */
const DIRECT_PROSCRIBED: Record<string, string[]> = {
  // Elle: no Adya history can hold these. A garbage read (an element no one appended) is the same kind.
  'read-uncommitted': ['G0', 'duplicate-elements', 'cyclic-versions', 'garbage-read'],
  'read-committed': ['G1'],
  'cursor-stability': ['G1', 'G-cursor', 'lost-update'],
  'monotonic-view': ['G1', 'G-monotonic'],
  'monotonic-snapshot-read': ['G1', 'G-MSR'],
  'consistent-view': ['G1', 'G-single'],
  'forward-consistent-view': ['G1', 'G-SIb'],
  'update-serializable': ['G1', 'G-update'],
  'repeatable-read': ['G1', 'G2-item', 'lost-update'],
  'snapshot-isolation': ['internal', 'G1', 'G-SI', 'G-nonadjacent'],
  serializable: ['internal', 'G1', 'G2', 'predicate-read-miss'],
  'read-atomic': ['internal', 'G1a', 'future-read'],
  'causal-cerone': ['internal', 'G1a'],
  prefix: ['internal', 'G1a'],
  'parallel-snapshot-isolation': ['internal', 'G1a'],
  'update-atomic': ['lost-update'],
  'strict-serializable': ['G1', 'G1c-realtime', 'G2-realtime'],
  'strong-session-read-uncommitted': ['G0-process'],
  'strong-session-read-committed': ['G1c-process'],
  'strong-read-uncommitted': ['G0-realtime'],
  'strong-read-committed': ['G1c-realtime'],
  'strong-session-snapshot-isolation': ['internal', 'G1-process', 'G-nonadjacent-process'],
  'strong-snapshot-isolation': ['internal', 'G1-realtime', 'G-nonadjacent-realtime'],
  'strong-session-serializable': ['G1-process', 'G2-process'],
};

/** The `<name>-cycle-exists` pseudo-anomalies, by the model each belongs to (Elle's spelling of the name). */
export const CYCLE_EXISTS_NAME: Record<string, string> = {
  'read-uncommitted': 'PL-1-cycle-exists',
  'read-committed': 'PL-2-cycle-exists',
  'snapshot-isolation': 'PL-SI-cycle-exists',
  'repeatable-read': 'PL-2.99-cycle-exists',
  serializable: 'PL-3-cycle-exists',
  'strict-serializable': 'PL-SS-cycle-exists',
  'strong-session-read-uncommitted': 'strong-session-PL-1-cycle-exists',
  'strong-session-read-committed': 'strong-session-PL-2-cycle-exists',
  'strong-read-uncommitted': 'strong-PL-1-cycle-exists',
  'strong-read-committed': 'strong-PL-2-cycle-exists',
  'strong-session-snapshot-isolation': 'strong-session-snapshot-isolation-cycle-exists',
  'strong-snapshot-isolation': 'strong-snapshot-isolation-cycle-exists',
  'strong-session-serializable': 'strong-session-serializable-cycle-exists',
};

/** Cycle anomalies that have `-process` and `-realtime` variants. */
const CYCLE_BASES = [
  'G0',
  'G1c',
  'G1',
  'G-single',
  'G-single-item',
  'G-nonadjacent',
  'G-nonadjacent-item',
  'G2',
  'G2-item',
];

/** anomaly → anomalies it directly implies (finding a means b happened too). */
const ANOMALY_IMPLIES: Record<string, string[]> = (() => {
  const base: Record<string, string[]> = {
    G0: ['G1c'],
    G1c: ['G1'],
    'G-single-item': ['G-single', 'G-nonadjacent-item'],
    'G-single': ['G-nonadjacent', 'GSIb'],
    'G-nonadjacent-item': ['G-nonadjacent', 'G2-item'],
    'G-nonadjacent': ['G2'],
    'G2-item': ['G2'],
  };
  const out: Record<string, string[]> = {};
  const add = (a: string, b: string) => {
    const list = out[a] ?? [];
    list.push(b);
    out[a] = list;
  };
  for (const [a, bs] of Object.entries(base)) {
    for (const b of bs) {
      add(a, b);
      // Mirror the cycle implications onto the session and realtime variants (GSIb has none).
      if (CYCLE_BASES.includes(b)) {
        add(`${a}-process`, `${b}-process`);
        add(`${a}-realtime`, `${b}-realtime`);
      }
    }
  }
  for (const x of CYCLE_BASES) {
    add(x, `${x}-process`);
    add(`${x}-process`, `${x}-realtime`);
  }
  add('G1a', 'G1');
  add('G1b', 'G1');
  add('lost-update', 'write-skew');
  add('lost-update', 'G2-item');
  add('write-skew', 'G2');
  add('incompatible-order', 'G1a');
  add('dirty-update', 'G1a');
  add('future-read', 'G1c');
  return out;
})();

/** Anomalies that never make a history invalid but make it `unknown`. */
export const UNKNOWN_ANOMALIES: ReadonlySet<string> = new Set([
  'empty-transaction-graph',
  'cycle-search-timeout',
]);

/** Every anomaly name this Elle knows: what it can report, imply or forbid under some model. */
const ALL_ANOMALIES: ReadonlySet<string> = new Set([
  ...Object.keys(ANOMALY_IMPLIES),
  ...Object.values(ANOMALY_IMPLIES).flat(),
  ...Object.values(DIRECT_PROSCRIBED).flat(),
  ...Object.values(CYCLE_EXISTS_NAME),
  ...UNKNOWN_ANOMALIES,
  ...['G1a', 'G1b', 'internal', 'lost-update', 'incompatible-order', 'future-read'],
  ...['duplicate-elements', 'dirty-update', 'cyclic-versions', 'garbage-read'],
]);

/** True for an anomaly name Elle knows (`--anomalies G9` is a typo, not a request). */
export function isKnownAnomaly(name: string): boolean {
  return ALL_ANOMALIES.has(name);
}

export function canonicalModel(name: string): string {
  return MODEL_ALIASES[name] ?? name;
}

const ALL_MODELS: ReadonlySet<string> = (() => {
  const s = new Set<string>();
  for (const [a, bs] of Object.entries(MODEL_IMPLIES)) {
    s.add(a);
    for (const b of bs) s.add(b);
  }
  for (const m of Object.keys(DIRECT_PROSCRIBED)) s.add(m);
  return s;
})();

export function isKnownModel(name: string): boolean {
  return ALL_MODELS.has(canonicalModel(name));
}

/** Breadth-first closure of `start` along `edges`. */
function closure(start: Iterable<string>, edges: Record<string, string[]>): Set<string> {
  const seen = new Set<string>();
  const queue: string[] = [];
  for (const s of start) {
    if (!seen.has(s)) {
      seen.add(s);
      queue.push(s);
    }
  }
  for (let i = 0; i < queue.length; i++) {
    for (const next of edges[queue[i]!] ?? []) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return seen;
}

function reverse(edges: Record<string, string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [a, bs] of Object.entries(edges)) {
    for (const b of bs) {
      const list = out[b] ?? [];
      list.push(a);
      out[b] = list;
    }
  }
  return out;
}

const ANOMALY_IMPLIED_BY = reverse(ANOMALY_IMPLIES);
const MODEL_IMPLIED_BY = reverse(MODEL_IMPLIES);

/** Every anomaly that finding `anomaly` also establishes (including itself). */
export function impliedAnomalies(anomaly: string): ReadonlySet<string> {
  let s = impliedCache.get(anomaly);
  if (!s) {
    s = closure([anomaly], ANOMALY_IMPLIES);
    impliedCache.set(anomaly, s);
  }
  return s;
}
const impliedCache = new Map<string, Set<string>>();

function directProscriptions(model: string): string[] {
  const own = DIRECT_PROSCRIBED[model] ?? [];
  const ce = CYCLE_EXISTS_NAME[model];
  return ce ? [...own, ce] : own;
}

/**
 * Anomalies that the requested models forbid, plus the extra anomalies asked for: both are closed upward
 * (anything that implies a forbidden anomaly is forbidden too).
 */
export function prohibitedAnomalies(
  models: readonly string[],
  extraAnomalies: readonly string[] = [],
): Set<string> {
  const implied = closure(models.map(canonicalModel), MODEL_IMPLIES);
  const direct: string[] = [...extraAnomalies];
  for (const m of implied) direct.push(...directProscriptions(m));
  return closure(direct, ANOMALY_IMPLIED_BY);
}

/** Models ruled out by the found anomalies: `not` holds the weakest of them, `alsoNot` the rest. */
export function boundary(found: Iterable<string>): { not: string[]; alsoNot: string[] } {
  const anomalies = closure(found, ANOMALY_IMPLIES);
  const violated: string[] = [];
  for (const m of ALL_MODELS) {
    if (directProscriptions(m).some((a) => anomalies.has(a))) violated.push(m);
  }
  const impossible = closure(violated, MODEL_IMPLIED_BY);
  const not: string[] = [];
  const alsoNot: string[] = [];
  for (const m of impossible) {
    const strongerThanAnother = (MODEL_IMPLIES[m] ?? []).some((weaker) =>
      [...closure([weaker], MODEL_IMPLIES)].some((w) => impossible.has(w)),
    );
    (strongerThanAnother ? alsoNot : not).push(m);
  }
  return { not: not.sort(), alsoNot: alsoNot.sort() };
}
