import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { buildReportJson } from '../../src/app/report/report-json.ts';
import { writeSessionReports } from '../../src/app/report/write-all.ts';
import { SAMPLE_HEADLINE, sampleSession } from './session-record.ts';

/**
 * findings/report.html: one self-contained page with the verdict table, each scenario's headline, the
 * links that open a FAIL's op on its key's page and on the timeline, the fault windows with what each
 * did, the plots inlined, the per-key page index and every artifact; and report.md / report.json carry
 * the same headline and links.
 */
async function written() {
  const dir = await mkdtemp(join(tmpdir(), 'faultline-html-'));
  const rec = await sampleSession(dir);
  // A plot the perf checker would have drawn in S2's run directory.
  mkdirSync(join(dir, 'artifacts/S2/01-run'), { recursive: true });
  writeFileSync(
    join(dir, 'artifacts/S2/01-run/latency.svg'),
    '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect class="fault-band"/></svg>\n',
  );
  const files = await writeSessionReports(rec);
  return { dir, rec, files, read: (p: string) => readFile(join(dir, p), 'utf8') };
}

test('report.html: verdicts, the FAIL headline, links to the failing op, fault windows, plots, pages', async (t) => {
  const { dir, files, read } = await written();
  try {
    t.true(files.includes(join(dir, 'findings/report.html')));
    const html = await read('findings/report.html');
    t.true(html.startsWith('<!doctype html>'));
    // Self-contained: no script, no stylesheet or image from elsewhere, no URL but the SVG namespace.
    t.false(/<script|<link|<img|url\(|@import/.test(html));
    t.deepEqual([...new Set(html.match(/https?:\/\/[^"'\s<]+/g))], ['http://www.w3.org/2000/svg']);
    // The verdict table has every row.
    for (const id of ['S1', 'S2', 'S3', 'S3/api', 'S3/watch', 'S4'])
      t.regex(html, new RegExp(`<tr><td>(<a href="#[^"]+">)?${id.replace('/', '\\/')}(</a>)?</td>`));
    t.regex(html, /<span class="v FAIL">FAIL-reproducible<\/span>/);
    // The headline, whole, in the summary and in S2's section (escaped as HTML).
    const escaped = SAMPLE_HEADLINE.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    t.true(html.split(escaped).length - 1 >= 3, 'summary, table row and section');
    // The failing op on its key's page and on the timeline, relative to findings/.
    t.true(html.includes('href="../artifacts/S2/01-run/independent/x/page.html#op=812&amp;ctx=1203"'));
    t.true(html.includes('href="../artifacts/S2/01-run/timeline.html#op=812&amp;ctx=1203"'));
    // Fault windows with what each did; the plot inlined; the per-key index with verdicts.
    t.regex(
      html,
      /<td>w1<\/td><td>partition \(one\)<\/td><td>n2 isolated from n1 n3 n4 n5<\/td><td>4\.0 s<\/td><td>10\.5 s<\/td>/,
    );
    t.regex(html, /<div class="plots"><svg[^>]*><rect class="fault-band"\/><\/svg>/);
    t.regex(
      html,
      /<td>x<\/td><td>INVALID<\/td><td><a href="\.\.\/artifacts\/S2\/01-run\/independent\/x\/page\.html#op=812&amp;ctx=1203">/,
    );
    t.regex(html, /<td>y<\/td><td>valid<\/td>/);
    // Every artifact is linked.
    t.true(html.includes('href="../artifacts/S2/01-run/history.jsonl"'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('report.md and report.json carry the same headline, fault descriptions and anomaly links', async (t) => {
  const { dir, rec, read } = await written();
  try {
    const md = await read('findings/report.md');
    t.true(md.includes(`**FAIL: S2 FAIL-reproducible: ${SAMPLE_HEADLINE}**`));
    t.true(md.includes(`| FAIL-reproducible: ${SAMPLE_HEADLINE} |`), 'the scenario row');
    t.true(
      md.includes(
        '[anomaly (no-lost-ack: key x, op 812)](../artifacts/S2/01-run/independent/x/page.html#op=812&ctx=1203)',
      ),
    );
    t.true(md.includes('w1 partition one (n2 isolated from n1 n3 n4 n5): landed'));
    const s2md = await read('findings/S2.md');
    t.true(s2md.includes(`- **What failed:** ${SAMPLE_HEADLINE}`));
    t.true(s2md.includes('- **Fault window w1:** n2 isolated from n1 n3 n4 n5 from 4.0 s to 10.5 s'));
    const json = buildReportJson(rec);
    const s2 = json.scenarios.find((s) => s.id === 'S2');
    t.is(s2?.headline, SAMPLE_HEADLINE);
    t.deepEqual(s2?.anomaly, {
      op: 812,
      key: 'x',
      page: 'artifacts/S2/01-run/independent/x/page.html#op=812&ctx=1203',
      timeline: 'artifacts/S2/01-run/timeline.html#op=812&ctx=1203',
    });
    t.deepEqual(s2?.faultWindows[0], {
      id: 'w1',
      kind: 'partition',
      what: 'n2 isolated from n1 n3 n4 n5',
      startS: 4,
      endS: 10.5,
      landed: true,
      substitutions: [],
    });
    t.deepEqual(
      s2?.pages.map((p) => [p.key, p.valid]),
      [
        ['x', false],
        ['y', true],
      ],
    );
    t.notRegex(
      json.scenarios.find((s) => s.id === 'S1')?.headline ?? '',
      /^On /,
      'only a FAIL has the op sentence',
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
