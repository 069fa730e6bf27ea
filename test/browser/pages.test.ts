import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import test from 'ava';
import { execa } from 'execa';
import type { Page } from 'playwright-core';
import { localClusterUnavailableReason } from '../../src/lib/clusters/host-tools.ts';
import { type BrowserSession, browserMissing, inViewport, launchBrowser } from '../helpers/browser.ts';

/**
 * The pages of a real FAIL, in a real browser. Once per test run, the demo plan's negative control (S3:
 * serializable reads while a member is isolated) runs on a local cluster and FAILs; the session it
 * leaves under test-sessions/browser/ is then opened in headless Chromium: report.html, the failing
 * key's linearizability page and the timeline, each reached through the report's own links. Each must
 * show the failing op in the viewport and draw the fault window, load nothing from the network, and
 * throw no error. Screenshots are saved in the session dir (artifacts/browser/) for CI to keep.
 *
 * Needs Chromium (Debian's package) and a local cluster (root, etcd); without either the tests are
 * skipped and say why, unless FAULTLINE_REQUIRE_CLUSTER is set (CI), which makes that a failure.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const OUT = join(root, 'test-sessions', 'browser');
const reason = browserMissing() ?? localClusterUnavailableReason();

let sessionDir = '';
let browser: BrowserSession | undefined;
const pageErrors: string[] = [];

if (reason && process.env.FAULTLINE_REQUIRE_CLUSTER) {
  test('a browser and a local cluster are available (FAULTLINE_REQUIRE_CLUSTER)', (t) => t.fail(reason));
}
const it = reason ? test.skip : test.serial;
const title = (s: string) => (reason ? `${s} (skipped: ${reason})` : s);

if (!reason) {
  test.before(async (t) => {
    t.timeout(15 * 60_000, 'a real S3 run (two 30 s runs on a local cluster)');
    mkdirSync(OUT, { recursive: true });
    const before = new Set(sessionsIn(OUT));
    const r = await execa(
      'node',
      [
        join(root, 'bin/faultline.js'),
        'run',
        'plans/etcd-register.md',
        '--local',
        '3',
        '--cluster-name',
        'rep-browser',
        '--tier',
        'smoke',
        '--seed',
        '7',
        '--yes',
        '--scenario',
        'S3',
        '--max-reduction-runs',
        '0',
        '--deadline',
        '12m',
        '--out',
        OUT,
      ],
      { cwd: root, reject: false, env: { FAULTLINE_FROM_SOURCE: '1', NO_COLOR: '1' }, all: true },
    );
    const fresh = sessionsIn(OUT).filter((d) => !before.has(d));
    if (fresh.length !== 1) throw new Error(`no new session under ${OUT} (exit ${r.exitCode}):\n${r.all}`);
    sessionDir = fresh[0] as string;
    // S3 is the plan's negative control: its expected FAIL-reproducible is met, so the run exits 0.
    if (r.exitCode !== 0 || !/^S3 +FAIL-reproducible/m.test(r.all ?? ''))
      throw new Error(`S3 should FAIL-reproducible as expected (exit 0), got exit ${r.exitCode}:\n${r.all}`);
    browser = await launchBrowser();
    browser.context.on('page', (p) => p.on('pageerror', (e) => pageErrors.push(`${p.url()}: ${e.message}`)));
  });
  test.after.always(async () => {
    await browser?.close();
  });
}

function sessionsIn(out: string): string[] {
  const plan = join(out, 'etcd-register');
  // Session directories only: not the store's `latest` link nor its `.index.jsonl`.
  return existsSync(plan)
    ? readdirSync(plan, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => join(plan, d.name))
    : [];
}

async function shot(page: Page, name: string): Promise<string> {
  const dir = join(sessionDir, 'artifacts', 'browser');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/** The report's anomaly, as report.json records it. */
function anomaly(): { op: number; key: string | null; page: string; timeline: string } {
  const json = JSON.parse(readFileSync(join(sessionDir, 'findings/report.json'), 'utf8')) as {
    scenarios: {
      id: string;
      anomaly: { op: number; key: string | null; page: string; timeline: string } | null;
    }[];
  };
  const a = json.scenarios.find((s) => s.id === 'S3')?.anomaly;
  if (!a) throw new Error('report.json has no anomaly for S3');
  return a;
}

/** Follow a link of report.html (by its text) and wait for the page it opens. */
async function follow(report: Page, text: RegExp): Promise<Page> {
  const href = await report.getByRole('link', { name: text }).first().getAttribute('href');
  if (!href) throw new Error(`no link ${text}`);
  const target = new URL(href, report.url());
  const path = fileURLToPath(new URL(target.href.replace(/#.*$/, '')));
  if (!existsSync(path)) throw new Error(`${href} points to a missing file`);
  const page = await (browser as BrowserSession).open(target.href);
  await page.waitForSelector('.ln-focus', { state: 'visible' });
  return page;
}

it(title('report.html shows the FAIL headline and links to the failing op'), async (t) => {
  const b = browser as BrowserSession;
  const page = await b.open(pathToFileURL(join(sessionDir, 'findings/report.html')).href);
  const headline = (await page.textContent('#headline')) ?? '';
  const a = anomaly();
  // The negative control failed as the plan expects: the session is DONE, and S3's row explains the FAIL.
  t.regex(headline, /^DONE: .*S3 FAIL-reproducible/);
  t.true(await inViewport(page, '#headline'));
  const row =
    (await page
      .locator('tr', { has: page.locator('a[href="#S3"]') })
      .first()
      .textContent()) ?? '';
  t.regex(
    row,
    new RegExp(
      `FAIL-reproducible.*On key \\S+, .+ \\(op ${a.op}, process \\d+ on n\\d, [\\d.–]+ s, (?:during w\\d: |with no fault active, [\\d.]+ s after w\\d healed \\()n\\d isolated from `,
    ),
  );
  // The plots are inline and shade the fault windows, labelled with what each did.
  const bands = await page.$$eval('svg .fault-band', (els) =>
    els.map((e) => e.getAttribute('data-label') ?? ''),
  );
  t.true(bands.length >= 2, 'latency and rate plots each shade the window');
  t.true(
    bands.every((l) => /^w\d partition: n\d isolated from( n\d)+$/.test(l)),
    bands.join(' | '),
  );
  t.log('screenshot:', await shot(page, 'report'));
  await page.close();
});

it(title('the failing key’s linearizability page opens on the op that cannot be linearized'), async (t) => {
  const b = browser as BrowserSession;
  const report = await b.open(pathToFileURL(join(sessionDir, 'findings/report.html')).href);
  const a = anomaly();
  const page = await follow(report, /on its page/);
  t.regex(page.url(), new RegExp(`independent/[^/]+/linearizability\\.html#op=${a.op}(&ctx=[\\d,]+)?$`));
  t.true(await inViewport(page, '.ln-focus'), 'the failing op is in the viewport');
  t.is(await page.getAttribute('.ln-focus', 'data-op'), String(a.op));
  t.regex((await page.textContent('h1')) ?? '', /NOT linearizable/);
  const bands = await page.$$eval('.ln-band', (els) => els.map((e) => e.getAttribute('data-label') ?? ''));
  t.true(
    bands.some((l) => /isolated from/.test(l)),
    `fault band drawn: ${bands.join(' | ')}`,
  );
  // The legend shows the colours the bars are drawn in (not black boxes).
  const swatches = await page.$$eval('.ln-sw', (els) =>
    els.map(
      (e) =>
        (
          globalThis as unknown as { getComputedStyle(x: unknown): { backgroundColor: string } }
        ).getComputedStyle(e).backgroundColor,
    ),
  );
  t.true(
    swatches.includes('rgb(239, 154, 154)') && swatches.includes('rgb(200, 230, 201)'),
    swatches.join(', '),
  );
  // The page opens on its own anomaly without the #op= link too.
  const plain = await b.open(page.url().replace(/#.*$/, ''));
  await plain.waitForSelector('.ln-focus', { state: 'visible' });
  t.is(await plain.getAttribute('.ln-focus', 'data-op'), String(a.op));
  t.true(await inViewport(plain, '.ln-focus'));
  t.log('screenshot:', await shot(page, 'linearizability'));
  await Promise.all([page.close(), plain.close(), report.close()]);
});

it(title('the timeline opens on the failing op with the fault windows drawn'), async (t) => {
  const b = browser as BrowserSession;
  const report = await b.open(pathToFileURL(join(sessionDir, 'findings/report.html')).href);
  const a = anomaly();
  const page = await follow(report, /on the timeline/);
  t.true(await inViewport(page, '.ln-focus'), 'the failing op is in the viewport');
  t.is(await page.getAttribute('.ln-focus', 'data-op'), String(a.op));
  const bands = await page.$$eval('.ln-band', (els) => els.map((e) => e.getAttribute('data-label') ?? ''));
  t.true(
    bands.length >= 1 && bands.every((l) => /^w\d partition: n\d isolated from/.test(l)),
    bands.join(' | '),
  );
  t.log('screenshot:', await shot(page, 'timeline'));
  await Promise.all([page.close(), report.close()]);
});

it(title('no page loaded anything from the network or threw'), (t) => {
  t.deepEqual((browser as BrowserSession).blocked, []);
  t.deepEqual(pageErrors, []);
  t.log('session:', resolve(dirname(join(sessionDir, 'x'))));
});
