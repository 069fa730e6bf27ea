import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';

/**
 * plans/etcd-hardening-ci.md at hardening tier on a 4-node local cluster (about 10 minutes): S1
 * (partitions and kills, 3 seeds) must reach PASS-hardening and S3, its negative control, must reach
 * FAIL-reproducible, and the session exits 0 (S3's Technique marks it a negative control, so its FAIL
 * is expected although it declares no Expected verdict). Outside `npm test` (too long):
 * `npm run test:hardening` sets
 * FAULTLINE_HARDENING_TESTS=1. On a heavily loaded host the audits may rightly refuse PASS-hardening
 * (the workload could not produce its intended rate): re-run on a quieter host before blaming code.
 */
const enabled = process.env.FAULTLINE_HARDENING_TESTS === '1';
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const plan = new URL('../../plans/etcd-hardening-ci.md', import.meta.url).pathname;

(enabled ? test : test.skip)('etcd-hardening-ci: S1 PASS-hardening, S3 FAIL-reproducible', async (t) => {
  t.timeout(40 * 60_000);
  const out = mkdtempSync(join(tmpdir(), 'hard-e2e-'));
  const r = await execa(
    process.execPath,
    [
      bin,
      'run',
      plan,
      '--local',
      '4',
      '--cluster-name',
      `${process.env.FAULTLINE_TEST_CLUSTER_PREFIX ?? ''}hard-e2e`,
      '--tier',
      'hardening',
      '--scenario',
      'S1',
      '--scenario',
      'S3',
      '--seed',
      '1',
      '--out',
      out,
      '--json',
    ],
    { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } },
  );
  const result = JSON.parse(r.stdout) as { rows: { scenario: string; verdict: string }[] };
  const verdict = (id: string) => result.rows.find((x) => x.scenario === id)?.verdict;
  t.is(verdict('S1'), 'PASS-hardening', r.stdout);
  t.is(verdict('S3'), 'FAIL-reproducible', r.stdout);
  // S3 declares no Expected verdict: its Technique (negative control) makes the FAIL its success.
  t.is(r.exitCode, 0, 'the negative control FAILing as it must is no failure of the session');
});
