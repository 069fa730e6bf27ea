import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { renderReport, renderScenarioFinding } from '../../src/app/report/findings-markdown.ts';
import { cell, md } from '../../src/app/report/markdown-format.ts';
import { terminalText } from '../../src/core/util/terminal.ts';
import { sampleSession } from '../report/session-record.ts';

/**
 * Output a stranger cannot forge: a scenario name, finding or evidence text in report.md is text (no
 * HTML comment hiding the rest of the report, no tag, no link, no heading), and terminal output carries
 * no escape sequences from a history or a store.
 */
const HOSTILE =
  'x <!-- hide the rest\n# Fake heading [click](javascript:alert(1)) <script>alert(1)</script>\u001b[2J';

test('report.md: user text in names, reasons and tables cannot open HTML, a heading or a link', async (t) => {
  const rec = await sampleSession(await mkdtemp(join(tmpdir(), 'fl-sec-forge-')));
  const sc = rec.plan.resolved.find((r) => r.id === 'S2')!;
  sc.name = HOSTILE;
  const d = rec.verdicts.rows.find((r) => r.scenario === 'S2')!;
  d.reasons = [HOSTILE, ...d.reasons];
  for (const text of [renderReport(rec), renderScenarioFinding(rec, 'S2')]) {
    t.false(text.includes('<!--'), 'no HTML comment');
    t.false(text.includes('<script'), 'no tag');
    t.false(/^# Fake heading/m.test(text), 'no heading');
    t.false(text.includes('](javascript:'), 'no link');
    t.false(text.includes('\u001b'), 'no escape sequence');
    t.true(text.includes('x &lt;!-- hide the rest'), 'the text itself is kept, as text');
  }
  t.is(md('a\n# b [c](d)'), 'a # b &#91;c&#93;(d)');
  t.is(cell('<b>|x\ny'), '&lt;b&gt;\\|x<br>y');
});

test('terminal text: control characters and escape sequences are made visible, never sent', (t) => {
  t.is(terminalText('ok\u001b[2Jgone\u0007\u009b31m'), 'ok\\x1b[2Jgone\\x07\\x9b31m');
  t.is(terminalText('tab\tand café'), 'tab\tand café');
});
