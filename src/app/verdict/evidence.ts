import { z } from 'zod';
import { substitutionSchema } from '../../../nemeses/substitutes.ts';
import { clockReadingsSchema, wireCountSchema } from './run-readings.ts';

/**
 * `ScenarioEvidence`: everything a run of one scenario (or one §7.M.S arm) produced that the decision
 * tree (spec §2) and the two audits (spec §3) need. `faultline run` fills one per scenario/arm; the
 * verdict engine is pure over it. Anything the run could not establish is left out or null, never
 * guessed: a missing fact makes the dependent audit item "unchecked", which blocks PASS-hardening.
 */

const validity = z.union([z.literal(true), z.literal(false), z.literal('unknown')]);

export const oracleResultSchema = z.object({
  /** Checker name as in the binding (linearizable, elle, set-full …). */
  checker: z.string(),
  /** Is this the checker §7.M declares (as opposed to a supporting or surface check)? */
  declared: z.boolean().default(true),
  /** Did it run to a result? False when it crashed or was skipped. */
  ran: z.boolean(),
  valid: validity.nullable().default(null),
  /** One line of what it consumed, e.g. "Elle processed 4,217 ops, 0 anomalies". */
  evidence: z.string().default(''),
  /** What it cannot detect. */
  scope: z.string().default(''),
  opsConsumed: z.number().int().nonnegative().default(0),
  anomalies: z.number().int().nonnegative().default(0),
  /** Anomaly classes seen (G2-item, lost, nonlinearizable …). */
  anomalyTypes: z.array(z.string()).default([]),
  /** When it covered only part of the ops: which part ("per-key, not cross-key"). */
  subset: z.string().nullable().default(null),
  /** Set when the checker cannot tell pass from fail on this model/history (e.g. linearizable on a session claim). */
  mismatch: z.string().nullable().default(null),
  error: z.string().nullable().default(null),
  /**
   * For a result with anomalies: one sentence naming the first one (which op, process, node, key, time,
   * fault window, and what the checker expected instead); see ./headline.ts.
   */
  headline: z.string().nullable().default(null),
  /** The op that shows the first anomaly (its event index), its key, and the page that draws it. */
  focus: z
    .object({
      op: z.number().int().nonnegative(),
      /** The other ops the explanation names (event indices), to keep in view with it. */
      related: z.array(z.number().int().nonnegative()).default([]),
      key: z.string().nullable(),
      /** Relative to the run directory (`ScenarioEvidence.runDir`). */
      page: z.string().nullable(),
    })
    .nullable()
    .default(null),
  /** Pages the checker drew (one per key for a per-key check), with that key's verdict. */
  pages: z
    .array(
      z.object({
        key: z.string().nullable(),
        valid: validity,
        /** Relative to the run directory. */
        path: z.string(),
      }),
    )
    .default([]),
});
export type OracleResult = z.infer<typeof oracleResultSchema>;

export const seedRunSchema = z.object({
  seed: z.union([z.number(), z.string()]),
  outcome: z.enum(['pass', 'fail', 'unknown']),
  /** For a FAIL: was it re-run with the same seed, config and fault schedule, and did it fail again? */
  rerun: z.enum(['reproduced', 'not-reproduced', 'not-attempted']).default('not-attempted'),
  /** Reproducer command or path, when a FAIL reproduced. */
  reproducer: z.string().nullable().default(null),
  /** Why the seed's run ended without a history to judge (set-up failed, a node went away …). */
  error: z.string().optional(),
});
export type SeedRun = z.infer<typeof seedRunSchema>;

export const signalSchema = z.object({
  side: z.enum(['injector', 'victim']),
  node: z.string(),
  signal: z.string(),
  before: z.unknown().optional(),
  during: z.unknown().optional(),
  after: z.unknown().optional(),
  landed: z.boolean(),
  note: z.string().optional(),
});

/** A fault window as the nemesis ledger recorded it (nemeses/types.ts FaultRecord, JSON form). */
export const faultSchema = z.object({
  id: z.string(),
  kind: z.string(),
  action: z.string().default(''),
  /** Partition topology (halves, majorities-ring, asymmetric …) when kind = partition. */
  topology: z.string().nullable().default(null),
  /** What the fault did, e.g. `n2 isolated from n1 n3 n4 n5` (nemeses/describe.ts). */
  what: z.string().default(''),
  nodes: z.array(z.string()).default([]),
  /** Seconds from the start of the workload. */
  startS: z.number().nonnegative(),
  endS: z.number().nonnegative().nullable().default(null),
  landed: z.boolean(),
  reason: z.string().nullable().default(null),
  /**
   * The substitutes used instead of the native mechanism (nemeses/substitutes.ts): what was asked,
   * what was applied, what it reproduces and what it cannot. Empty: none. Older sessions recorded one
   * line of text, kept as the `applied` of a substitution whose other fields are unknown.
   */
  substitute: z
    .union([
      z
        .string()
        .transform((applied) => [
          { asked: 'unknown (older session)', applied, reproduces: 'unknown', cannot: 'unknown' },
        ]),
      z.array(substitutionSchema),
    ])
    .nullish()
    .transform((v) => v ?? []),
  signals: z.array(signalSchema).default([]),
  healed: z.boolean().default(false),
  /** The same signals measured again after heal: back to normal (landed) or not, and why. */
  afterHeal: z
    .object({ landed: z.boolean(), reason: z.string().nullable().default(null) })
    .nullable()
    .default(null),
});
export type FaultEvidenceRecord = z.infer<typeof faultSchema>;

export const throughputWindowSchema = z.object({
  startS: z.number().nonnegative(),
  endS: z.number().positive(),
  /** Completed client ops (ok + fail + info) in the window. */
  ops: z.number().int().nonnegative(),
  /**
   * Of those, the ops the database answered (ok, or a definite refusal from its own logic; not a failed
   * read, a timeout or an op that never reached it, such as Jepsen's no-client): the rate red flag 8
   * compares. Absent in evidence recorded before it was counted.
   */
  served: z.number().int().nonnegative().optional(),
  faultActive: z.boolean(),
  /**
   * Seconds of the window the workload was serving: from the first completed client op (before it the
   * clients are still starting) to the end of the workload. Absent: the whole window.
   */
  seconds: z.number().nonnegative().optional(),
  /**
   * After a heal, before every key served an ok op again and the rate was back to nominal (recovery,
   * judged by RF8 with its budget).
   */
  recovering: z.boolean().optional(),
});
export type ThroughputWindow = z.infer<typeof throughputWindowSchema>;

/** The 11 default history fields (spec "Operation-history schema"). */
export const HISTORY_FIELDS = [
  'op_id',
  'process_id',
  'invoke_ts/complete_ts',
  'op_type',
  'key',
  'input',
  'output',
  'error',
  'timeout_marker',
  'node_seen',
  'fault_epoch',
] as const;

export const historyFactsSchema = z.object({
  /** Client operations (invocations) in the history. */
  ops: z.number().int().nonnegative(),
  /** Fields recorded on every op where they apply. */
  fieldsPresent: z.array(z.string()).default([...HISTORY_FIELDS]),
  /** Concrete weak-history findings: "12 ops with no response lack timeout_marker" … */
  weaknesses: z.array(z.string()).default([]),
  /** How timestamps were taken: monotonic per run (good) or wall clocks compared across processes. */
  clock: z.enum(['monotonic', 'wall', 'unknown']).default('unknown'),
  /** The recorder's clock readings during the run (clock.json): what RF5/WO9 judge. */
  clockReadings: clockReadingsSchema.nullable().default(null),
  /** Ops whose complete_ts is earlier than their invoke_ts (a clock that went backwards). */
  timeInversions: z.number().int().nonnegative().default(0),
  /**
   * Timeouts as the history records them (WO5): ops completed `info` (outcome unknown), and how many
   * of them wrongly carry a complete_ts. Null: not measured.
   */
  timeouts: z
    .object({
      count: z.number().int().nonnegative(),
      withCompletion: z.number().int().nonnegative(),
    })
    .nullable()
    .default(null),
  /** Did a client library retry behind the recorder's back (no network-side tap)? null = unknown. */
  hiddenRetries: z.boolean().nullable().default(null),
  /**
   * Requests the client put on the wire during the workload (wire.json), against the ops of the
   * history: WO8's observation. `perOp` is how many requests one op sends by design (null: varies).
   */
  wire: wireCountSchema.nullable().default(null),
  path: z.string().nullable().default(null),
});
export type HistoryFacts = z.infer<typeof historyFactsSchema>;

/** Recovery after heal (red flag 8). */
export const recoverySchema = z.object({
  /** Null when no window before the first fault had the workload serving. */
  baselineOpsPerSec: z.number().nonnegative().nullable(),
  /** Null when no window after the last recovery remained before the workload ended. */
  afterHealOpsPerSec: z.number().nonnegative().nullable(),
  /** Seconds after the last heal at which the rate was measured. */
  measuredAfterS: z.number().nonnegative().default(0),
  /**
   * Per healed fault window: seconds from its heal until every key in use served an ok op again
   * (null: some key never did), against the budget and where the budget came from.
   */
  windows: z
    .array(
      z.object({
        id: z.string(),
        healS: z.number().nonnegative(),
        keys: z.number().int().nonnegative(),
        recoveredAfterS: z.number().nonnegative().nullable(),
        budgetS: z.number().nonnegative(),
        budgetFrom: z.string(),
        slowestKey: z.string().nullable().default(null),
        unjudged: z
          .object({ keys: z.array(z.string()), by: z.string(), afterS: z.number().nonnegative() })
          .optional(),
        /** Keys the workload stopped asking inside the budget before they served again: not judged. */
        retired: z.array(z.string()).optional(),
        /** The rate back to nominal after this heal (absent in older sessions or with no reference). */
        rate: z
          .object({
            backAfterS: z.number().nonnegative().nullable(),
            referenceOpsPerSec: z.number().positive(),
            cutBy: z.string().optional(),
          })
          .optional(),
      }),
    )
    .default([]),
  /** Faults whose damage nothing undoes (a corruption without backup): no heal of their own to time. */
  permanent: z.array(z.string()).optional(),
});

/** SUT log lines matching panic / fatal / internal error; logsScanned = how many log files were read. */
export const sutLogSchema = z.object({
  filesScanned: z.number().int().nonnegative(),
  matches: z.array(
    z.object({ node: z.string(), file: z.string(), line: z.number().int(), text: z.string() }),
  ),
  /** Lines that matched but are the database's declared reaction to faults (`logNoise`). */
  expected: z.number().int().nonnegative().default(0),
  /** Why there was nothing to scan (the database declares no log files). */
  unavailable: z.string().optional(),
});

/**
 * What one seed's run measured: the facts the decision tree and the audits judge, for that seed alone.
 * A hardening run of several seeds judges every seed, not only the first (./seeds.ts).
 */
export const seedMeasurementSchema = z.object({
  seed: z.union([z.number(), z.string()]),
  /** The seed's run directory, relative to the session dir. */
  runDir: z.string().nullable().default(null),
  /** Wall duration of this seed's workload. */
  durationS: z.number().nonnegative().default(0),
  faults: z.array(faultSchema).default([]),
  oracles: z.array(oracleResultSchema).default([]),
  history: historyFactsSchema.nullable().default(null),
  throughput: z.array(throughputWindowSchema).default([]),
  recovery: recoverySchema.nullable().default(null),
  sutLog: sutLogSchema.nullable().default(null),
  failovers: z.number().int().nonnegative().nullable().default(null),
});
export type SeedMeasurement = z.infer<typeof seedMeasurementSchema>;
export type SeedMeasurementInput = z.input<typeof seedMeasurementSchema>;

export const dbVersionSchema = z.object({
  db: z.string(),
  expected: z.string().nullable(),
  source: z.string(),
  nodes: z.array(
    z.object({ node: z.string(), reported: z.string().nullable(), error: z.string().optional() }),
  ),
  mismatched: z.array(z.string()),
});

export type DbVersion = z.infer<typeof dbVersionSchema>;

export const scenarioEvidenceSchema = z.object({
  /** `S3` or `S5/api`. */
  scenario: z.string(),
  attempted: z.boolean(),
  notRunReason: z.string().nullable().default(null),
  /**
   * Why the scenario stopped before its planned runs ended (Ctrl-C, the session deadline, its own time
   * budget), or null: its evidence is then incomplete rather than contrary.
   */
  stoppedEarly: z.string().nullable().default(null),
  /** Capabilities found missing before the run (→ INCONCLUSIVE-env). */
  capabilitiesMissing: z.array(z.object({ name: z.string(), reason: z.string().default('') })).default([]),
  /** Substitutions in effect (recorded, never silent). */
  substitutions: z.array(z.string()).default([]),
  /** What actually ran: config size, wall duration of the workload, fault windows opened, seeds run. */
  ran: z
    .object({
      nodes: z.number().int().nonnegative().optional(),
      tenants: z.number().int().nonnegative().optional(),
      durationS: z.number().nonnegative(),
      /** Partition shapes that landed (halves, asymmetric …). */
      topologies: z.array(z.string()).default([]),
      /** Cluster sizes the seeds ran on. */
      clusterSizes: z.array(z.number().int().nonnegative()).default([]),
    })
    .default({ durationS: 0, topologies: [], clusterSizes: [] }),
  seeds: z.array(seedRunSchema).default([]),
  /** Fault windows the schedule planned for this run. */
  faultsScheduled: z.number().int().nonnegative().default(0),
  faults: z.array(faultSchema).default([]),
  oracles: z.array(oracleResultSchema).default([]),
  history: historyFactsSchema.nullable().default(null),
  /** Intended client rate (ops/s); null = closed loop, judged against the median window. */
  intendedOpsPerSec: z.number().positive().nullable().default(null),
  throughput: z.array(throughputWindowSchema).default([]),
  recovery: recoverySchema.nullable().default(null),
  /** SUT log lines matching panic / fatal / internal error (see sutLogSchema). */
  sutLog: sutLogSchema.nullable().default(null),
  /** Leader failovers observed during the run. */
  failovers: z.number().int().nonnegative().nullable().default(null),
  /** The baseline compared with: when and against which harness version it was taken. */
  baseline: z
    .object({
      harnessVersion: z.string(),
      currentHarnessVersion: z.string(),
      capturedAt: z.string(),
      /**
       * The baseline file the harness version was read from: relative to the session dir for this
       * session's own baseline, as given for an earlier session's (`--baseline`).
       */
      source: z.string().optional(),
      /** Read from an earlier session (`--baseline`), not captured by this run. */
      earlier: z.boolean().default(false),
      /** Seconds from the baseline's capture to the start of this run (null: unreadable time). */
      ageS: z.number().nullable().default(null),
      /** The baseline's no-fault ops/s, and this run's (median window outside faults), to compare. */
      opsPerSec: z.number().nonnegative().nullable().default(null),
      currentOpsPerSec: z.number().nonnegative().nullable().default(null),
    })
    .nullable()
    .default(null),
  /** Boundary/fairness facts: surfaces exercised, negative controls run, per-group breakdown present. */
  surfacesExercised: z.array(z.string()).default([]),
  negativeControls: z
    .object({
      run: z.number().int().nonnegative(),
      denied: z.number().int().nonnegative(),
      leakChecked: z.boolean(),
    })
    .nullable()
    .default(null),
  perGroupBreakdown: z.boolean().nullable().default(null),
  /** Per-item declarations for what cannot be measured (keys: red-flag / weak-oracle item ids). */
  declarations: z
    .record(z.string(), z.object({ status: z.enum(['checked', 'n/a']), evidence: z.string() }))
    .default({}),
  startedAt: z.string().nullable().default(null),
  endedAt: z.string().nullable().default(null),
  artifacts: z.array(z.object({ label: z.string(), path: z.string() })).default([]),
  /** The run directory the evidence (and the checkers' pages) came from, relative to the session dir. */
  runDir: z.string().nullable().default(null),
  /**
   * Every seed's own measurement, in seed order (re-runs of a FAIL are not seeds). The fields above are
   * the primary run's (the failing seed's, else the first): what the report shows and links. Empty in
   * evidence recorded before per-seed measurements existed: the fields above are then the only run.
   */
  perSeed: z.array(seedMeasurementSchema).default([]),
  /**
   * The version the database itself reported on each node (`etcd --version`, Redis `INFO server`), the
   * one the binding expected, where the binary came from, and the nodes that disagree.
   */
  dbVersion: dbVersionSchema.nullable().default(null),
  notes: z.array(z.string()).default([]),
});
export type ScenarioEvidence = z.infer<typeof scenarioEvidenceSchema>;
export type ScenarioEvidenceInput = z.input<typeof scenarioEvidenceSchema>;

export function parseEvidence(raw: ScenarioEvidenceInput): ScenarioEvidence {
  return scenarioEvidenceSchema.parse(raw);
}
