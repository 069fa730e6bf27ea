import test from 'ava';
import fc from 'fast-check';
import { VERDICTS } from '../../src/app/plan/verdict-states.ts';
import { decideVerdict } from '../../src/app/verdict/decide.ts';
import type { ScenarioEvidence } from '../../src/app/verdict/evidence.ts';
import { hardeningEvidence, scenario } from './evidence-builders.ts';

/**
 * Properties over random damage to a passing hardening run: whatever breaks, a PASS-hardening never
 * survives with a missing fact, a FAIL always wins once attempted, and every verdict is explained.
 */
const S1 = scenario('S1');

type Damage = (e: ScenarioEvidence) => void;
const DAMAGE: Record<string, Damage> = {
  victimSignalLost: (e) => {
    e.faults[0]!.signals = e.faults[0]!.signals.filter((s) => s.side !== 'victim');
  },
  faultNotLanded: (e) => {
    e.faults[2]!.landed = false;
  },
  oracleConsumedLess: (e) => {
    e.oracles[0]!.opsConsumed = 59_999;
  },
  oracleDidNotRun: (e) => {
    e.oracles[0]!.ran = false;
  },
  oracleUnknown: (e) => {
    e.oracles[0]!.valid = 'unknown';
  },
  oracleFailed: (e) => {
    e.oracles[0]!.valid = false;
  },
  nodeSeenMissing: (e) => {
    e.history!.fieldsPresent = e.history!.fieldsPresent.filter((f) => f !== 'node_seen');
  },
  wallClock: (e) => {
    e.history!.clock = 'wall';
  },
  oneSeed: (e) => {
    e.seeds = e.seeds.slice(0, 1);
  },
  shortRun: (e) => {
    e.ran.durationS = 300;
  },
  smallCluster: (e) => {
    e.ran.nodes = 3;
  },
  silentStop: (e) => {
    e.throughput[12]!.ops = 0;
  },
  noRecovery: (e) => {
    e.recovery = null;
  },
  panicInLogs: (e) => {
    e.sutLog = {
      filesScanned: 5,
      matches: [{ node: 'n1', file: 'etcd.log', line: 1, text: 'panic: x' }],
      expected: 0,
    };
  },
  logsNotScanned: (e) => {
    e.sutLog = null;
  },
  symmetricOnly: (e) => {
    for (const f of e.faults) f.topology = 'halves';
  },
  oneTopology: (e) => {
    e.ran.topologies = ['5 nodes'];
  },
  capabilityMissing: (e) => {
    e.capabilitiesMissing = [{ name: 'iptables', reason: '' }];
  },
};
const names = Object.keys(DAMAGE);

test('no damaged run is PASS-hardening; FAIL wins over everything after step 2; every verdict has reasons', (t) => {
  fc.assert(
    fc.property(fc.subarray(names, { minLength: 1 }), (picked) => {
      const e = hardeningEvidence();
      for (const n of picked) DAMAGE[n]!(e);
      const d = decideVerdict(e, S1);
      if (!VERDICTS.includes(d.verdict)) return false;
      if (d.reasons.length === 0) return false;
      if (d.verdict === 'PASS-hardening') return false;
      if (picked.includes('capabilityMissing')) return d.verdict === 'INCONCLUSIVE-env';
      if (picked.includes('oracleFailed') && !picked.includes('oracleDidNotRun'))
        return d.verdict.startsWith('FAIL-');
      return !d.verdict.startsWith('FAIL-');
    }),
    { numRuns: 400 },
  );
  t.pass();
});

test('each single damage lowers the verdict (the baseline is PASS-hardening)', (t) => {
  t.is(decideVerdict(hardeningEvidence(), S1).verdict, 'PASS-hardening');
  for (const n of names) {
    const e = hardeningEvidence();
    DAMAGE[n]!(e);
    t.not(decideVerdict(e, S1).verdict, 'PASS-hardening', n);
  }
});
