import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import { startServer } from '../../src/app/store/results-server.ts';
import { sessionIds } from '../../src/app/store/store.ts';
import { type BrowserSession, browserMissing, inViewport, launchBrowser } from '../helpers/browser.ts';
import { writeFailingSession } from '../helpers/failing-session.ts';
import { generateStore } from '../helpers/store.ts';

/**
 * `faultline serve` in a real browser. A store of two plans × 12 nights is generated; the newest night
 * of `etcd-register` is a real failing session (per-key linearizability pages and the timeline drawn by
 * the checkers, every report written by the run's writers). Headless Chromium then goes where a user
 * would: the index's verdict grid, the newest session, its report page, the failing key's page, and the
 * diff with the previous night; each page must show the rows and verdicts a user looks for, every link
 * on it must answer 200, no page may throw or log an error, and no request may leave the server.
 * Screenshots go to test-sessions/serve-browser/ for CI to keep.
 *
 * Needs Chromium (Debian's package; scripts/install-deps.sh installs it); without it the test is skipped
 * and says why, unless FAULTLINE_REQUIRE_BROWSER is set (CI), which makes that a failure.
 */
const SHOTS = fileURLToPath(new URL('../../test-sessions/serve-browser/', import.meta.url));
const NIGHTS = 12;
const reason = browserMissing();

if (reason && process.env.FAULTLINE_REQUIRE_BROWSER) {
  test('Chromium is available (FAULTLINE_REQUIRE_BROWSER)', (t) => t.fail(reason));
}

/** etcd-register: S2 flips PASS/INCONCLUSIVE each night (flapping); S3 is a negative control. */
function store(root: string): void {
  generateStore(root, {
    names: ['etcd-register', 'redis-replication'],
    perName: NIGHTS,
    rowOf: (name, night, row) => {
      if (name === 'redis-replication') return { verdict: 'PASS-smoke', opsPerSec: 80 + night };
      if (row === 'S2') return { verdict: night % 2 ? 'INCONCLUSIVE-env' : 'PASS-smoke', p99: 30 + night };
      if (row === 'S3') return { verdict: 'FAIL-reproducible', expected: ['FAIL-reproducible'] };
      return { verdict: 'PASS-smoke', opsPerSec: 50 + (night % 4) };
    },
  });
}

/** Every same-origin link of a page answers 200 (fragments dropped); returns how many were checked. */
async function linksResolve(t: ExecutionContext, page: Page, base: string): Promise<number> {
  const hrefs = await page.$$eval('a[href]', (as) => as.map((a) => (a as unknown as { href: string }).href));
  const urls = [...new Set(hrefs.map((h) => h.replace(/#.*$/, '')))];
  for (const u of urls) {
    t.true(u.startsWith(base), `${page.url()} links outside the server: ${u}`);
    const r = await fetch(u, { method: 'HEAD' });
    t.is(r.status, 200, `${page.url()} → ${u}`);
  }
  return urls.length;
}

async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(SHOTS, { recursive: true });
  const path = join(SHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Clicks the link and waits for the page it opens (same tab). */
async function follow(page: Page, link: ReturnType<Page['getByRole']>): Promise<void> {
  await Promise.all([page.waitForEvent('load'), link.first().click()]);
}

const run = reason ? test.skip : test;
run(
  `serve in Chromium: index grid → session → report → failing key's page, and the diff view${reason ? ` (skipped: ${reason})` : ''}`,
  async (t) => {
    t.timeout(3 * 60_000, 'a store, a server and a browser on a loaded machine');
    const root = mkdtempSync(join(tmpdir(), 'fl-serve-browser-'));
    let server: Server | undefined;
    let browser: BrowserSession | undefined;
    try {
      store(root);
      const ids = sessionIds(root, 'etcd-register');
      const [previous, newest] = ids.slice(-2) as [string, string];
      const anomaly = await writeFailingSession(join(root, 'etcd-register', newest));
      server = await startServer(root, { port: 0, host: '127.0.0.1', last: 30 });
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      browser = await launchBrowser({ allowOrigins: [base] });
      const page = await browser.open(`${base}/`);

      // The index: both plans, a verdict grid of every row × night, flapping and failing rows visible.
      t.deepEqual(await page.$$eval('h2', (hs) => hs.map((h) => h.textContent)), [
        'etcd-register',
        'redis-replication',
      ]);
      const etcdRows = page.locator('table').first().locator('tr.row');
      const rowNames = await etcdRows.locator('td:first-child').allTextContents();
      t.true(rowNames.includes('S2 (flapping)'), rowNames.join(', '));
      const s2Cells = etcdRows.filter({ hasText: 'S2' }).first().locator('a.cell');
      t.is(await s2Cells.count(), NIGHTS, 'one cell per night');
      t.is(
        await s2Cells.last().getAttribute('title'),
        `${newest}: FAIL-reproducible`,
        'the newest night fails S2',
      );
      const red = await s2Cells
        .last()
        .evaluate(
          (e) =>
            (
              globalThis as unknown as { getComputedStyle(x: unknown): { backgroundColor: string } }
            ).getComputedStyle(e).backgroundColor,
        );
      t.is(red, 'rgb(217, 83, 79)', 'a failure is drawn red');
      t.true((await page.locator('svg.trend').count()) >= 2, 'ops/s and p99 trends are drawn');
      t.true(await inViewport(page, 'h2'));
      t.log('links on the index:', await linksResolve(t, page, base));
      t.log('screenshot:', await shot(page, 'index'));

      // The newest session: its verdict, the failing row, a link to the report page.
      await follow(page, page.getByRole('link', { name: newest }));
      t.is(new URL(page.url()).pathname, `/session/etcd-register/${newest}`);
      t.is(await page.textContent('p.verdict b'), 'FAIL');
      const s2 = page.locator('tr', { has: page.locator('td', { hasText: /^S2$/ }) });
      t.is(await s2.locator('td').nth(1).textContent(), 'FAIL-reproducible');
      t.is(await s2.locator('td').nth(3).textContent(), 'failure');
      t.log('links on the session page:', await linksResolve(t, page, base));
      t.log('screenshot:', await shot(page, 'session'));

      // Its report page, served from the store: the FAIL headline, then the failing key's page.
      await follow(page, page.getByRole('link', { name: 'open the report page' }));
      t.regex(page.url(), new RegExp(`/files/etcd-register/${newest}/findings/report\\.html$`));
      t.regex((await page.textContent('#headline')) ?? '', /FAIL/);
      t.log('links on the report page:', await linksResolve(t, page, base));
      t.log('screenshot:', await shot(page, 'report'));
      await follow(page, page.getByRole('link', { name: /on its page/ }));
      t.regex(page.url(), new RegExp(`/${anomaly.page.replace(/[.]/g, '\\.')}#op=${anomaly.op}`));
      await page.waitForSelector('.ln-focus', { state: 'visible' });
      t.is(await page.getAttribute('.ln-focus', 'data-op'), String(anomaly.op));
      t.true(await inViewport(page, '.ln-focus'), 'the failing op is in the viewport');
      t.regex((await page.textContent('h1')) ?? '', /NOT linearizable/);
      t.log('screenshot:', await shot(page, 'failing-key'));

      // The diff with the previous night, from the index.
      await page.goto(`${base}/`);
      await follow(page, page.getByRole('link', { name: 'diff with previous' }).first());
      t.is(new URL(page.url()).pathname, `/diff/etcd-register/${previous}/${newest}`);
      const diff = (await page.textContent('pre.diff')) ?? '';
      // S2 alone is a new failure: S3, the negative control, FAILed as planned every night before.
      t.regex(diff, /New failures:\*\* \n\n- S2: PASS-smoke → FAIL-reproducible\n\n/);
      t.regex(diff, /Flapping:\*\* \n\n- S2: PASS-smoke → INCONCLUSIVE-env → .* → FAIL-reproducible\n/);
      // The newest night's S3 (the sample session's) stopped failing as planned: news, and red.
      t.regex(diff, /New verdicts that are not PASS:\*\* \n\n- S3: FAIL-reproducible → PARTIAL-surface\n/);
      t.log('links on the diff page:', await linksResolve(t, page, base));
      t.log('screenshot:', await shot(page, 'diff'));

      t.deepEqual(browser.blocked, [], 'no request left the server');
      t.deepEqual(browser.errors, [], 'no page threw or logged an error');
    } finally {
      await browser?.close();
      server?.close();
      rmSync(root, { recursive: true, force: true });
    }
  },
);
