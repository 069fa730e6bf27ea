import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { diffIsRed, diffSessions, renderDiff } from '../../src/app/store/diff.ts';
import type { RowSummary, SessionSummary } from '../../src/app/store/store.ts';
import { loadHistory } from '../../src/core/history/read.ts';
import { generateStore } from '../helpers/store.ts';

const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const fl = (...args: string[]) =>
  execa('node', [bin, 'sessions', ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } });

/** Five nights of `nightly`: S1 passes, then fails on night 4; S2 flips PASS/INCONCLUSIVE; S3 is a negative control. */
function store(): string {
  const root = mkdtempSync(join(tmpdir(), 'fl-sessions-'));
  generateStore(root, {
    names: ['nightly', 'other'],
    perName: 5,
    rowOf: (_name, night, row) => {
      if (row === 'S1')
        return night === 4 ? { verdict: 'FAIL-reproducible' } : { verdict: 'PASS-smoke', opsPerSec: 50 };
      if (row === 'S2')
        return { verdict: night % 2 === 0 ? 'PASS-smoke' : 'INCONCLUSIVE-env', p99: night === 4 ? 80 : 40 };
      return { verdict: 'FAIL-reproducible', expected: ['FAIL-reproducible'] };
    },
  });
  return root;
}

test('list and show read the store; show defaults to the latest session', async (t) => {
  const root = store();
  const list = await fl('list', '--root', root);
  t.is(list.exitCode, 0, list.stderr);
  t.regex(list.stdout, /^nightly \(5 session\(s\)\)/m);
  t.regex(
    list.stdout,
    /2026-10-05T02-00-00Z {2}FAIL +S1 FAIL-reproducible ✗, S2 PASS-smoke, S3 FAIL-reproducible$/m,
  );
  const show = await fl('show', '--root', root, '--name', 'nightly');
  t.regex(show.stdout, /^nightly 2026-10-05T02-00-00Z \(run\): FAIL/);
  t.regex(show.stdout, /S3 +FAIL-reproducible +success +\(expected FAIL-reproducible/);
  const ambiguous = await fl('show', '--root', root);
  t.is(ambiguous.exitCode, 254);
  t.regex(ambiguous.stderr, /holds 2 names \(nightly, other\): say which with --name/);
});

test('diff (latest vs previous): new failures, flapping rows and moved figures; a negative control is no news', async (t) => {
  const root = store();
  const r = await fl('diff', '--root', root, '--name', 'nightly');
  t.is(r.exitCode, 1, 'a new failure makes diff exit 1');
  t.regex(r.stdout, /new failures: \n {2}- S1: PASS-smoke → FAIL-reproducible/);
  t.regex(r.stdout, /fixed: none/);
  t.regex(
    r.stdout,
    /flapping \(verdict changed more than once over the last 5 sessions\): \n {2}- S2: PASS-smoke → INCONCLUSIVE-env → PASS-smoke → INCONCLUSIVE-env → PASS-smoke/,
  );
  t.regex(r.stdout, /S2 p99 ms: 40\.0 → 80\.0 \(\+100%\)/);
  t.notRegex(r.stdout, /S3/);
  const back = await fl(
    'diff',
    '--root',
    root,
    '--name',
    'nightly',
    'nightly/latest',
    'nightly/2026-10-02T02-00-00Z',
    '--json',
  );
  const d = JSON.parse(back.stdout);
  t.deepEqual(d.fixed, [{ row: 'S1', before: 'FAIL-reproducible', after: 'PASS-smoke' }]);
  t.deepEqual(d.newNotPass, [{ row: 'S2', before: 'PASS-smoke', after: 'INCONCLUSIVE-env' }]);
  t.is(back.exitCode, 1, 'a PASS that turned INCONCLUSIVE is a new verdict that is not PASS');
});

test('diff: a row seen for the first time goes red unless it passes or meets its expectation', (t) => {
  const summary = (rows: RowSummary[]): SessionSummary => ({
    name: 'nightly',
    id: `2026-10-0${rows.length}T02-00-00Z`,
    dir: '/nowhere',
    kind: 'run',
    startedAt: null,
    verdict: 'DONE',
    headline: '',
    rows,
  });
  const row = (id: string, verdict: string, outcome: RowSummary['outcome']): RowSummary => ({
    id,
    verdict,
    outcome,
    expected: null,
    opsPerSec: null,
    p99Ms: null,
    anomalies: null,
  });
  const before = summary([row('S1', 'PASS-smoke', 'success')]);
  const after = (r: RowSummary) => summary([row('S1', 'PASS-smoke', 'success'), r]);
  const fail = diffSessions(before, after(row('S4', 'FAIL-reproducible', 'failure')), []);
  t.deepEqual(fail.newFailures, [{ row: 'S4', before: '(new row)', after: 'FAIL-reproducible' }]);
  t.true(diffIsRed(fail));
  t.regex(renderDiff(fail), /new failures: \n {2}- S4: \(new row\) → FAIL-reproducible/);
  const inconclusive = diffSessions(before, after(row('S4', 'INCONCLUSIVE-env', 'concern')), []);
  t.deepEqual(inconclusive.newNotPass, [{ row: 'S4', before: '(new row)', after: 'INCONCLUSIVE-env' }]);
  t.true(diffIsRed(inconclusive));
  t.regex(
    renderDiff(inconclusive),
    /new verdicts that are not PASS: \n {2}- S4: \(new row\) → INCONCLUSIVE-env/,
  );
  const control = diffSessions(before, after(row('S4', 'FAIL-reproducible', 'success')), []);
  t.false(diffIsRed(control), 'a new negative control that FAILs as the plan expects is no news');
  t.false(diffIsRed(diffSessions(before, after(row('S4', 'PASS-smoke', 'success')), [])));
  t.deepEqual(control.added, ['S4']);
});

const indexIds = (root: string, name: string) =>
  readFileSync(join(root, name, '.index.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { id: string }).id);

test('prune: --dry-run removes nothing; --keep and --older-than never remove the newest', async (t) => {
  const root = store();
  const dry = await fl('prune', '--root', root, '--keep', '2', '--dry-run');
  t.regex(dry.stdout, /6 session\(s\) would be removed, 4 kept/);
  t.is(readdirSync(join(root, 'nightly')).length, 7, '5 sessions, latest, .index.jsonl');
  const r = await fl('prune', '--root', root, '--keep', '2', '--name', 'nightly');
  t.regex(r.stdout, /3 session\(s\) removed, 2 kept/);
  t.deepEqual(readdirSync(join(root, 'nightly')).sort(), [
    '.index.jsonl',
    '2026-10-04T02-00-00Z',
    '2026-10-05T02-00-00Z',
    'latest',
  ]);
  t.deepEqual(
    indexIds(root, 'nightly'),
    ['2026-10-04T02-00-00Z', '2026-10-05T02-00-00Z'],
    'the index drops the removed sessions',
  );
  const old = await fl('prune', '--root', root, '--older-than', '1d');
  t.regex(old.stdout, /5 session\(s\) removed, 2 kept/);
  t.true(existsSync(join(root, 'other', 'latest', 'findings', 'report.json')), 'latest still resolves');
  t.is((await fl('prune', '--root', root)).exitCode, 254);
});

test('compress: large artifacts become .gz, the reports stay plain, histories still load', async (t) => {
  const root = store();
  const dir = join(root, 'nightly', '2026-10-05T02-00-00Z', 'artifacts', 'S1');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(dir, { recursive: true });
  const lines: string[] = [];
  for (let i = 0; i < 4000; i++) {
    const t0 = i * 1_000_000;
    lines.push(
      JSON.stringify({
        index: 2 * i,
        type: 'invoke',
        f: 'write',
        value: i,
        process: i % 5,
        time: t0,
        node: 'n1',
        faultEpoch: null,
        key: 'r',
      }),
      JSON.stringify({
        index: 2 * i + 1,
        type: 'ok',
        f: 'write',
        value: i,
        process: i % 5,
        time: t0 + 500,
        node: 'n1',
        faultEpoch: null,
        key: 'r',
      }),
    );
  }
  const history = join(dir, 'history.jsonl');
  writeFileSync(history, `${lines.join('\n')}\n`);
  const before = await loadHistory(history);
  const size = statSync(history).size;
  const r = await fl('compress', '--root', root, '--min-size', '64K');
  t.is(r.exitCode, 0, r.stderr);
  t.regex(r.stdout, /1 file\(s\) compressed: \d+ → \d+ bytes/);
  t.false(existsSync(history));
  t.true(statSync(`${history}.gz`).size < size / 4);
  t.true(existsSync(join(root, 'nightly', '2026-10-05T02-00-00Z', 'findings', 'report.json')));
  t.deepEqual(await loadHistory(history), before, 'the plain name still reads');
  t.deepEqual(await loadHistory(`${history}.gz`), before);
  t.regex(readFileSync(join(root, 'nightly', 'latest', 'findings', 'report.md'), 'utf8'), /Findings/);
});

test('the summary index: list reads it; a line whose report changed is not trusted; index rebuilds it', async (t) => {
  const root = store();
  t.is(indexIds(root, 'nightly').length, 5, 'one line per generated session, as run writes them');
  // A line that says something else than its report shows the index is what list read…
  const path = join(root, 'nightly', '.index.jsonl');
  const lines = readFileSync(path, 'utf8').trim().split('\n');
  const last = JSON.parse(lines.at(-1)!);
  last.verdict = 'DONE_WITH_CONCERNS';
  writeFileSync(path, `${[...lines.slice(0, -1), JSON.stringify(last)].join('\n')}\n`);
  t.regex(
    (await fl('list', '--root', root, '--name', 'nightly')).stdout,
    /05T02-00-00Z {2}DONE_WITH_CONCERNS/,
  );
  // …and once the report is rewritten (new size and mtime), the line is ignored and the report read.
  const report = join(root, 'nightly', '2026-10-05T02-00-00Z', 'findings', 'report.json');
  writeFileSync(report, `${readFileSync(report, 'utf8')}\n`);
  t.regex((await fl('list', '--root', root, '--name', 'nightly')).stdout, /05T02-00-00Z {2}FAIL /);
  // A line cut short and a store without an index still list every session.
  writeFileSync(path, `${lines[0]}\n{"v":1,"id":"2026-10-0`);
  t.regex((await fl('list', '--root', root, '--name', 'nightly')).stdout, /^nightly \(5 session\(s\)\)/m);
  const rebuilt = await fl('index', '--root', root);
  t.is(rebuilt.exitCode, 0, rebuilt.stderr);
  t.regex(rebuilt.stdout, /^nightly: 5 of 5 session\(s\) indexed$/m);
  t.is(indexIds(root, 'nightly').length, 5);
});
