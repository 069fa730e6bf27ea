import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { VERDICTS } from '../../src/app/plan/verdict-states.ts';
import { renderJunit } from '../../src/app/report/junit.ts';
import { NOT_IN_SHARD, NOT_SELECTED, sessionVerdict } from '../../src/app/verdict/aggregate.ts';
import type { Decision } from '../../src/app/verdict/decide.ts';
import { sampleSession } from './session-record.ts';

const xsd = new URL('./junit.xsd', import.meta.url).pathname;

test('every verdict maps to the JUnit element CI systems expect, and the file validates', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'faultline-junit-'));
  const rec = await sampleSession(dir);
  const ids = rec.plan.resolved.map((r) => r.id);
  const rows: Decision[] = VERDICTS.map((verdict, i) => ({
    scenario: ids[i % ids.length]!,
    verdict,
    reasons: [`because <${verdict}> & "quoted"`],
    step: 8,
    tierMet: null,
    release: false,
    audits: null,
  }));
  rec.verdicts = { rows, topLevel: rows, session: sessionVerdict(rows) };
  const xml = renderJunit(rec);
  const cases = xml.split('<testcase ').slice(1);
  t.is(cases.length, 10);
  for (const [i, verdict] of VERDICTS.entries()) {
    const c = cases[i]!;
    t.notRegex(c, /<skipped/, `${verdict}: never skipped (dashboards count skipped as green)`);
    if (verdict.startsWith('FAIL-'))
      t.regex(c, new RegExp(`<failure message="${verdict}: because &lt;`), verdict);
    else if (verdict.startsWith('PASS-')) t.notRegex(c, /<failure|<error/, verdict);
    else
      t.regex(
        c,
        new RegExp(`<error message="${verdict}: because &lt;${verdict}&gt; &amp; &quot;quoted&quot;"`),
        verdict,
      );
  }
  t.regex(xml, /tests="10" failures="2" errors="6" skipped="0"/);
  t.regex(renderJunit(rec, 'failure'), /tests="10" failures="8" errors="0" skipped="0"/);
  const file = join(dir, 'junit.xml');
  await writeFile(file, xml);
  const r = await execa('xmllint', ['--noout', '--schema', xsd, file], { reject: false });
  t.is(r.exitCode, 0, r.stderr);
  await rm(dir, { recursive: true });
});

test('rows left out with --scenario or run by another shard are not test cases (never an <error>)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'faultline-junit-'));
  const rec = await sampleSession(dir);
  const ids = rec.plan.resolved.map((r) => r.id);
  const row = (scenario: string, verdict: Decision['verdict'], reason: string): Decision => ({
    scenario,
    verdict,
    reasons: [reason],
    step: 8,
    tierMet: null,
    release: false,
    audits: null,
  });
  const rows = [
    row(ids[0]!, 'PASS-smoke', 'ok'),
    row(ids[1]!, 'NOT-RUN', NOT_SELECTED),
    row(ids[2]!, 'NOT-RUN', NOT_IN_SHARD),
    row(ids[3]!, 'NOT-RUN', 'no executable binding'),
  ];
  rec.verdicts = { rows, topLevel: rows, session: sessionVerdict(rows) };
  const xml = renderJunit(rec);
  t.regex(xml, /tests="2" failures="0" errors="1" skipped="0"/, 'a row with no binding is still an error');
  t.is(xml.split('<testcase ').length - 1, 2);
  t.notRegex(xml, /not selected/);
  await rm(dir, { recursive: true });
});
