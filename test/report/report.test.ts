import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import {
  ADEQUACY_COLUMNS,
  DISCLOSURE_COLUMNS,
  REPORT_SECTIONS,
  SCENARIO_RESULT_COLUMNS,
  SURFACE_COLUMNS,
} from '../../src/app/report/findings-markdown.ts';
import { reportJsonSchema } from '../../src/app/report/report-json.ts';
import { SESSION_LOG_SECTIONS } from '../../src/app/report/session-log.ts';
import { writeSessionReports } from '../../src/app/report/write-all.ts';
import { sampleSession } from './session-record.ts';

const xsd = new URL('./junit.xsd', import.meta.url).pathname;

async function session() {
  const dir = await mkdtemp(join(tmpdir(), 'faultline-report-'));
  const rec = await sampleSession(dir);
  const files = await writeSessionReports(rec);
  return { dir, rec, files, read: (p: string) => readFile(join(dir, p), 'utf8') };
}

function headings(md: string, level: number): string[] {
  const re = new RegExp(`^${'#'.repeat(level)} (.+)$`, 'gm');
  return [...md.matchAll(re)].map((m) => m[1]!);
}

function tableHeaderRow(cols: readonly string[]): string {
  return `| ${cols.join(' | ')} |`;
}

test('the session verdicts behind the sample: FAIL leads', async (t) => {
  const { rec, dir } = await session();
  t.is(rec.verdicts.session.verdict, 'FAIL');
  const v = Object.fromEntries(rec.verdicts.rows.map((d) => [d.scenario, d.verdict]));
  t.is(v.S2, 'FAIL-reproducible');
  t.is(v['S3/watch'], 'NOT-RUN');
  t.is(v.S3, 'PARTIAL-surface');
  t.is(v.S4, 'NOT-RUN');
  await rm(dir, { recursive: true });
});

test('session-log.md has the header and every template section, in order, with its table columns', async (t) => {
  const { read, dir } = await session();
  const md = await read('session-log.md');
  t.regex(md, /^# Session log: kv-store-partitions @ 2026-11-30T03:00:00Z$/m);
  for (const k of ['SUT', 'Plan', 'Commit under test', 'Session dir', 'Operator'])
    t.regex(md, new RegExp(`^- \\*\\*${k}:\\*\\* `, 'm'));
  t.deepEqual(headings(md, 2), [...SESSION_LOG_SECTIONS]);
  t.true(md.includes(tableHeaderRow(['Requirement', 'Present?', 'Version', 'Source'])));
  t.true(md.includes(tableHeaderRow(['Time (UTC)', 'Scenario', 'Event', 'Notes'])));
  t.true(md.includes(tableHeaderRow(['Scenario / arm', 'Budget tier met', 'Verdict', 'Notes'])));
  t.regex(md, /- \[x\] cluster up/);
  t.regex(md, /- \[ \] baseline captured/);
  t.regex(md, /- scripts\/chaos\.sh — fault wiring/);
  t.regex(md, /\| 2026-11-30T03:00:11Z \| S1 \| fault injected: partition \|/);
  t.regex(md, /\| S3\/watch \| — \| NOT-RUN \|/);
  await rm(dir, { recursive: true });
});

test('report.md has all 10 sections of the findings template in order, summary headline first', async (t) => {
  const { read, dir } = await session();
  const md = await read('findings/report.md');
  t.regex(md, /^# Findings: kv-store-partitions @ 2026-11-30T03:00:00Z$/m);
  t.deepEqual(headings(md, 2), [...REPORT_SECTIONS]);
  const summary = md.split('## Summary\n\n')[1]!;
  t.regex(summary, /^\*\*FAIL: S2 FAIL-reproducible/);
  for (const cols of [SCENARIO_RESULT_COLUMNS, SURFACE_COLUMNS, DISCLOSURE_COLUMNS, ADEQUACY_COLUMNS]) {
    t.true(md.includes(tableHeaderRow(cols)), cols.join(','));
  }
  // one row per arm plus the aggregate parent row
  for (const id of ['S1', 'S2', 'S3', 'S3/api', 'S3/watch', 'S3/snapshot', 'S4'])
    t.regex(md, new RegExp(`^\\| ${id.replace('/', '\\/')} \\|`, 'm'));
  await rm(dir, { recursive: true });
});

test('report.md: findings fields, smoke landing cell, verbatim disclosures, missing surfaces, confidence delta', async (t) => {
  const { read, dir } = await session();
  const md = await read('findings/report.md');
  t.regex(md, /### Finding F1: Acked adds lost after leader kill/);
  for (const f of [
    'Scenario',
    'Hypothesis addressed',
    'What happened',
    'Reproducer',
    'Reduction classification',
    'Classification',
    'Severity',
    'Evidence',
    'Hypothesised root cause',
    'Suggested next action',
  ]) {
    t.regex(md, new RegExp(`^- \\*\\*${f}:\\*\\* `, 'm'), f);
  }
  t.regex(md, /\| S3\/api \|[^\n]*\| n\/a — no fault \(PASS-smoke\) \|/);
  t.regex(md, /\| S1 \| no soak rig yet \| the nightly cluster exists \|/);
  t.regex(md, /\| S3 \| boundary soak not designed \| multi-tenant GA \|/);
  t.regex(md, /Missing surfaces this run did not cover: S3\/watch/);
  t.regex(md, /\*\*Less\*\* relative to the plan's §7d/);
  await rm(dir, { recursive: true });
});

test('report.md: the green-but-broken check lists 10 + 14 items per scenario, each with evidence', async (t) => {
  const { read, dir } = await session();
  const md = await read('findings/report.md');
  const gbb = md.split('## Green-but-broken check\n')[1]!;
  const sections = gbb.split(/^### /m).slice(1);
  t.is(sections.length, 7);
  for (const s of sections) {
    const items = s.split('\n').filter((l) => /^- \[[ x]\] (RF|WO)\d+\. /.test(l));
    t.is(items.length, 24, s.split('\n')[0]);
    for (const l of items)
      t.regex(l, / — \*\*(checked|failed|unchecked|n\/a)\*\*( \(not required here\))?: \S/);
  }
  t.regex(gbb, /RF3\. The faults were injected[^\n]*\*\*checked\*\*: w1: n1 FAULTLINE DROP packets 0→14712/);
  await rm(dir, { recursive: true });
});

test('findings/<scenario>.md is written per top-level scenario, arms inside their parent', async (t) => {
  const { read, dir, files } = await session();
  t.true(files.some((f) => f.endsWith('findings/S3.md')));
  const s3 = await read('findings/S3.md');
  t.regex(s3, /^# Scenario S3: tenant_prefix_isolation/);
  t.regex(s3, /^## Arm S3\/api$/m);
  t.regex(s3, /^## Arm S3\/snapshot$/m);
  const s2 = await read('findings/S2.md');
  t.regex(s2, /### Finding F1/);
  await rm(dir, { recursive: true });
});

test('report.json validates against its schema, and the schema rejects a broken one', async (t) => {
  const { read, dir } = await session();
  const json = JSON.parse(await read('findings/report.json'));
  t.notThrows(() => reportJsonSchema.parse(json));
  t.is(json.sessionVerdict, 'FAIL');
  t.is(json.schemaVersion, 2);
  t.is(json.scenarios.length, 7);
  const s2 = json.scenarios.find((s: { id: string }) => s.id === 'S2');
  t.is(s2.outcome, 'failure');
  t.is(s2.headline, s2.reasons[0], 'a FAIL row leads with its headline sentence');
  t.is(s2.counts.anomalies.total, 3);
  t.deepEqual(s2.counts.faults, { scheduled: 3, injected: 1, landed: 1, healed: 1 });
  t.true(
    s2.artifacts.every((a: { path: string }) => !a.path.startsWith('/')),
    'paths relative to the session',
  );
  t.true(s2.artifacts.some((a: { path: string }) => a.path === 'findings/S2.md'));
  const broken = structuredClone(json);
  broken.scenarios[0].verdict = 'PASS';
  t.throws(() => reportJsonSchema.parse(broken));
  const schema = JSON.parse(await read('findings/report.schema.json'));
  t.is(schema.type, 'object');
  await rm(dir, { recursive: true });
});

async function xmllint(file: string) {
  return execa('xmllint', ['--noout', '--schema', xsd, file], { reject: false });
}

test('junit.xml validates against the JUnit XSD; FAIL → failure, NOT-RUN/PARTIAL → error, never skipped', async (t) => {
  const { read, dir } = await session();
  const r = await xmllint(join(dir, 'junit.xml'));
  t.is(r.exitCode, 0, r.stderr);
  const xml = await read('junit.xml');
  t.regex(xml, /<testsuite name="kv-store-partitions" tests="7" failures="1" errors="4" skipped="0"/);
  t.regex(xml, /name="S2 acked_put_survives_leader_kill"[^>]*>\n\s*<failure message="FAIL-reproducible: /);
  t.regex(xml, /name="S3\/watch[^"]*"[^>]*>\n\s*<error message="NOT-RUN: /);
  t.regex(xml, /name="S3 tenant_prefix_isolation"[^>]*>\n\s*<error message="PARTIAL-surface: capped/);
  await rm(dir, { recursive: true });
});

test('the JUnit XSD rejects a malformed report (the validation can fail)', async (t) => {
  const { read, dir } = await session();
  const bad = (await read('junit.xml'))
    .replace(/ classname="[^"]*"/, '')
    .replace('failures="1"', 'failures="one"');
  const file = join(dir, 'bad.xml');
  await writeFile(file, bad);
  const r = await xmllint(file);
  t.not(r.exitCode, 0);
  t.regex(r.stderr, /classname|failures/);
  await rm(dir, { recursive: true });
});

test('a report that cannot be written is an error naming the path, never claimed as written', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'faultline-report-'));
  const rec = await sampleSession(join(dir, 'no', 'such', 'dir'));
  const { writeSessionLog } = await import('../../src/app/report/session-log.ts');
  const printed: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string) => {
    printed.push(chunk);
    return true;
  }) as typeof process.stdout.write;
  const err = await t.throwsAsync(writeSessionLog(rec)).finally(() => {
    process.stdout.write = write;
  });
  t.regex(err!.message, /session-log\.md: cannot write: directory \S+ does not exist/);
  t.regex(printed.join(''), /^# Session log: kv-store-partitions/);
  await rm(dir, { recursive: true });
});
