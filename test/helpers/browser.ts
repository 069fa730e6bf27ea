import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/**
 * Headless Chromium for page tests: Debian's `chromium` package (scripts/install-deps.sh installs it),
 * driven by playwright-core; no browser is downloaded. Every launch gets a fresh profile, and the flags
 * below keep Chromium from reaching out on its own (on a closed network its background connections are
 * refused and slow it down). Pages are opened from file:// URLs, or from the origins a test allows (a
 * `faultline serve` on 127.0.0.1); any other request is blocked and recorded, so a test can assert that
 * a page needs no network. Errors a page throws or logs to its console are recorded too.
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
] as const;

/** Why page tests cannot run here, or null when they can. */
export function browserMissing(): string | null {
  return existsSync(CHROMIUM_PATH)
    ? null
    : `${CHROMIUM_PATH} not found: install Debian's chromium (apt-get install chromium, or scripts/install-deps.sh)`;
}

export interface BrowserSession {
  context: BrowserContext;
  /** Requests to anything but file:// and the allowed origins (each one was blocked). */
  blocked: string[];
  /** Uncaught page errors and console.error messages, each prefixed with its page's URL. */
  errors: string[];
  open(url: string, viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

export async function launchBrowser(o: { allowOrigins?: readonly string[] } = {}): Promise<BrowserSession> {
  const profile = await mkdtemp(join(tmpdir(), 'faultline-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_FLAGS],
    viewport: { width: 1400, height: 900 },
  });
  const blocked: string[] = [];
  const allowed = (url: string) =>
    url.startsWith('file:') ||
    url.startsWith('data:') ||
    url === 'about:blank' ||
    (o.allowOrigins ?? []).some((origin) => new URL(url).origin === origin);
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (allowed(url)) return route.continue();
    blocked.push(url);
    return route.abort();
  });
  const errors: string[] = [];
  context.on('page', (p) => {
    p.on('pageerror', (e) => errors.push(`${p.url()}: ${e.message}`));
    p.on('console', (m) => {
      if (m.type() === 'error') errors.push(`${p.url()}: console: ${m.text()}`);
    });
  });
  return {
    context,
    blocked,
    errors,
    async open(url, viewport) {
      const page = await context.newPage();
      if (viewport) await page.setViewportSize(viewport);
      await page.goto(url, { waitUntil: 'load' });
      return page;
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Run `fn` with a fresh browser, always closed afterwards. */
export async function withBrowser<T>(fn: (b: BrowserSession) => Promise<T>): Promise<T> {
  const b = await launchBrowser();
  try {
    return await fn(b);
  } finally {
    await b.close();
  }
}

/** Where an element is relative to the window: inside (fully or partly visible) or not. */
export async function inViewport(page: Page, selector: string): Promise<boolean> {
  return page.$eval(selector, (el) => {
    // Runs in the page; the test's tsconfig has no DOM library.
    const w = globalThis as unknown as {
      innerWidth: number;
      innerHeight: number;
      getComputedStyle(e: unknown): { display: string };
    };
    const r = el.getBoundingClientRect();
    return (
      w.getComputedStyle(el).display !== 'none' &&
      r.width > 0 &&
      r.height > 0 &&
      r.bottom > 0 &&
      r.right > 0 &&
      r.top < w.innerHeight &&
      r.left < w.innerWidth
    );
  });
}
