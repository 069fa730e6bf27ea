import test from 'ava';
import { landingEvidence } from '../../src/app/report/cells.ts';
import { runAudits } from '../../src/app/verdict/audits.ts';
import { decideVerdict } from '../../src/app/verdict/decide.ts';
import {
  parseEvidence,
  type ScenarioEvidence,
  type SeedMeasurementInput,
} from '../../src/app/verdict/evidence.ts';
import { assessTier } from '../../src/app/verdict/tier.ts';
import { hardeningEvidence, scenario } from './evidence-builders.ts';

const S1 = scenario('S1');

/** A seed's measurement copied from the PASS-hardening evidence, then damaged by `damage`. */
function seedOf(seed: number, damage: (m: SeedMeasurementInput) => void = () => {}): SeedMeasurementInput {
  const ev = hardeningEvidence();
  const m: SeedMeasurementInput = structuredClone({
    seed,
    runDir: `artifacts/S1/0${seed}-run-seed-${seed}`,
    durationS: ev.ran.durationS,
    faults: ev.faults,
    oracles: ev.oracles,
    history: ev.history,
    throughput: ev.throughput,
    recovery: {
      baselineOpsPerSec: 100,
      afterHealOpsPerSec: 98,
      measuredAfterS: 10,
      windows: ev.faults.map((f) => ({
        id: f.id,
        healS: f.endS ?? 0,
        keys: 5,
        recoveredAfterS: 1,
        budgetS: 20,
        budgetFrom: 'the next fault window',
        slowestKey: 'k1',
      })),
    },
    sutLog: ev.sutLog,
    failovers: ev.failovers,
  });
  damage(m);
  return m;
}

/** Three seeds, seed 1 primary (its measurement is also the top-level fields). */
function threeSeeds(...seeds: SeedMeasurementInput[]): ScenarioEvidence {
  const first = seeds[0]!;
  return hardeningEvidence({
    faults: first.faults,
    throughput: first.throughput,
    recovery: first.recovery,
    perSeed: seeds,
  });
}

function rf(ev: ScenarioEvidence, id: string) {
  const d = decideVerdict(ev, S1);
  const audits = d.audits ?? runAudits(ev, S1, 'hardening');
  const i = [...audits.redFlags, ...audits.weakOracle].find((x) => x.id === id);
  if (!i) throw new Error(id);
  return { d, i };
}

test('three clean seeds: PASS-hardening, and the reasons count every seed’s windows', (t) => {
  const d = decideVerdict(threeSeeds(seedOf(1), seedOf(2), seedOf(3)), S1);
  t.is(d.verdict, 'PASS-hardening', d.reasons.join(' | '));
  t.regex(d.reasons[0]!, /3 \+ 3 \+ 3 fault window\(s\) landed over 3 seeds/);
});

test('a fault that did not land in seed 2 only: not PASS, INCONCLUSIVE-fault-not-proven naming seed 2', (t) => {
  const ev = threeSeeds(
    seedOf(1),
    seedOf(2, (m) => {
      const w2 = m.faults![1]!;
      w2.landed = false;
      w2.reason = 'FAULTLINE DROP counter stayed 0';
      w2.signals = w2.signals!.filter((s) => s.side === 'injector');
    }),
    seedOf(3),
  );
  const d = decideVerdict(ev, S1);
  t.is(d.verdict, 'INCONCLUSIVE-fault-not-proven');
  t.regex(d.reasons[0]!, /seed 2: w2 \(partition\): FAULTLINE DROP counter stayed 0, no victim signal/);
  t.notRegex(d.reasons[0]!, /seed [13]:/);
  // The audits, judged on every seed, say the same.
  const a = runAudits(ev, S1, 'hardening');
  const rf3 = a.redFlags.find((i) => i.id === 'RF3')!;
  t.is(rf3.status, 'failed');
  t.regex(rf3.evidence, /^seed 2: w2: no victim evidence \(2 other seed\(s\) did not\)$/);
  t.is(a.redFlags.find((i) => i.id === 'RF4')!.status, 'failed');
});

test('the same seed-2 gap with one seed only recorded (old evidence): the primary alone is judged', (t) => {
  // Evidence without per-seed measurements reads as before: the top-level fields are the one run.
  const d = decideVerdict(hardeningEvidence(), S1);
  t.is(d.verdict, 'PASS-hardening');
  t.deepEqual(parseEvidence({ scenario: 'S1', attempted: true }).perSeed, []);
});

test('RF1: a rate collapse in seed 3 fails the item and names seed 3', (t) => {
  const { d, i } = rf(
    threeSeeds(
      seedOf(1),
      seedOf(2),
      seedOf(3, (m) => {
        m.throughput![5]!.ops = 50;
      }),
    ),
    'RF1',
  );
  t.is(i.status, 'failed');
  t.regex(i.evidence, /^seed 3: rate collapse outside fault windows: 5\.0 ops\/s at 50s/);
  t.not(d.verdict, 'PASS-hardening');
  t.regex(d.reasons.join(' '), /RF1 failed \(seed 3: rate collapse/);
});

test('RF1: every seed at rate, the evidence is the worst seed’s, named', (t) => {
  const { d, i } = rf(
    threeSeeds(
      seedOf(1),
      seedOf(2, (m) => {
        m.throughput![5]!.ops = 700;
      }),
      seedOf(3, (m) => {
        m.throughput![7]!.ops = 900;
      }),
    ),
    'RF1',
  );
  t.is(d.verdict, 'PASS-hardening');
  t.is(i.status, 'checked');
  t.regex(i.evidence, /^worst of 3 seeds, seed 2: .* min 70\.0 ops\/s/);
});

test('RF8: seed 2 recovered after its budget: failed, naming seed 2 and the window', (t) => {
  const { d, i } = rf(
    threeSeeds(
      seedOf(1),
      seedOf(2, (m) => {
        m.recovery!.windows![2]!.recoveredAfterS = 31;
      }),
      seedOf(3),
    ),
    'RF8',
  );
  t.is(i.status, 'failed');
  t.regex(
    i.evidence,
    /^seed 2: not recovered within budget: w3 healed at 430\.0s: 31\.0s \(key k1\) > budget 20\.0s/,
  );
  t.not(d.verdict, 'PASS-hardening');
});

test('RF8: every seed recovered, the slowest seed is named', (t) => {
  const { i } = rf(
    threeSeeds(
      seedOf(1),
      seedOf(2),
      seedOf(3, (m) => {
        m.recovery!.windows![0]!.recoveredAfterS = 11;
      }),
    ),
    'RF8',
  );
  t.is(i.status, 'checked');
  t.regex(
    i.evidence,
    /^worst of 3 seeds, seed 3: 3 heal\(s\): every key in use served an ok op within 11\.0s \(slowest w1/,
  );
});

test('RF7 and WO4 judge every seed: a panic in seed 3, one failover in seed 2', (t) => {
  const ev = threeSeeds(
    seedOf(1),
    seedOf(2),
    seedOf(3, (m) => {
      m.sutLog = {
        filesScanned: 5,
        matches: [{ node: 'n2', file: 'etcd.log', line: 7, text: 'panic: raft' }],
      };
    }),
  );
  const rf7 = runAudits(ev, S1, 'hardening').redFlags.find((i) => i.id === 'RF7')!;
  t.is(rf7.status, 'failed');
  t.regex(rf7.evidence, /^seed 3: 1 match\(es\) .* n2 etcd\.log:7: panic: raft/);

  const withKill = (failovers: number) => (m: SeedMeasurementInput) => {
    m.faults = [
      ...m.faults!,
      { ...m.faults![0]!, id: 'k1', kind: 'process', action: 'kill', topology: null },
    ];
    m.failovers = failovers;
  };
  const kills = threeSeeds(seedOf(1, withKill(3)), seedOf(2, withKill(1)), seedOf(3, withKill(2)));
  const wo4 = runAudits(kills, S1, 'hardening').weakOracle.find((i) => i.id === 'WO4')!;
  t.is(wo4.status, 'failed');
  t.regex(wo4.evidence, /^seed 2: 1 failover\(s\) of the database's primaries/);
  const enough = threeSeeds(seedOf(1, withKill(3)), seedOf(2, withKill(5)), seedOf(3, withKill(2)));
  const wo4ok = runAudits(enough, S1, 'hardening').weakOracle.find((i) => i.id === 'WO4')!;
  t.is(wo4ok.status, 'checked');
  t.regex(wo4ok.evidence, /^worst of 3 seeds, seed 3: 2 failovers/);
});

test('a seed shorter than the hardening duration, or with fewer landed windows, misses the tier', (t) => {
  const short = threeSeeds(
    seedOf(1),
    seedOf(2, (m) => {
      m.durationS = 300;
    }),
    seedOf(3),
  );
  t.deepEqual(assessTier(short, S1.tiers).shortfalls.hardening, ['durationS']);
  const fewer = threeSeeds(
    seedOf(1),
    seedOf(2),
    seedOf(3, (m) => {
      m.faults = m.faults!.slice(0, 2);
    }),
  );
  t.deepEqual(assessTier(fewer, S1.tiers).shortfalls.hardening, ['faultWindows']);
  t.is(decideVerdict(fewer, S1).verdict, 'INCONCLUSIVE-fault-not-proven');
});

test('steps 5–7 on every seed: seed 3’s checker could not decide → INCONCLUSIVE-oracle-too-weak, named', (t) => {
  const d = decideVerdict(
    threeSeeds(
      seedOf(1),
      seedOf(2),
      seedOf(3, (m) => {
        m.oracles![0]!.valid = 'unknown';
      }),
    ),
    S1,
  );
  t.is(d.verdict, 'INCONCLUSIVE-oracle-too-weak');
  t.regex(d.reasons[0]!, /^seed 3: linearizable could not decide/);
});

test('one seed recorded per seed: the same decision as without per-seed measurements', (t) => {
  const plain = hardeningEvidence({ seeds: [{ seed: 1, outcome: 'pass' }] });
  const withOne = hardeningEvidence({ seeds: [{ seed: 1, outcome: 'pass' }], perSeed: [seedOf(1)] });
  const a = decideVerdict(plain, S1);
  const b = decideVerdict(withOne, S1);
  t.is(b.verdict, a.verdict);
  t.deepEqual(b.reasons, a.reasons);
});

test('the landing cell shows the primary run’s windows and every seed’s landed count', (t) => {
  const ev = threeSeeds(
    seedOf(7),
    seedOf(8, (m) => {
      m.faults![2]!.landed = false;
    }),
    seedOf(9),
  );
  const d = decideVerdict(ev, S1);
  const cell = landingEvidence(ev, d);
  t.regex(cell, /^w1 partition majorities-ring: landed/);
  t.regex(cell, / — per seed: 7 3\/3 landed, 8 2\/3 landed, 9 3\/3 landed$/);
  t.notRegex(landingEvidence(hardeningEvidence(), decideVerdict(hardeningEvidence(), S1)), /per seed/);
});
