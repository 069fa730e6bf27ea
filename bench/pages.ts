/**
 * Op pages at scale: a generated 100k-op register history (10 processes, 1 ms between linearization
 * points, overlapping ops, fault windows every 20 s, one stale read near the end) is checked, and its
 * linearizability page and timeline are written and opened in headless Chromium. Prints, per page: the
 * file size, the time to write it, the time from navigation to the load event (data parsed, first draw
 * done, scrolled to the failing op), and the time to redraw the view (what each scroll or zoom costs).
 *
 *   npm run bench:pages [-- --ops N] [--runs N] [--json] [--keep DIR (keep the pages there)]
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { faultBands } from '../checkers/fault-bands.ts';
import { linearizabilityChecker } from '../checkers/linearizability/index.ts';
import { renderTimeline } from '../checkers/timeline/page.ts';
import type { HistoryEvent } from '../src/core/history/event.ts';
import { pairEvents } from '../src/core/history/pair.ts';
import { browserMissing, launchBrowser } from '../test/helpers/browser.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const N = Number(arg('--ops') ?? 100_000);
const runs = Math.max(1, Number(arg('--runs') ?? 3));
const json = process.argv.includes('--json');
const MS = 1e6;

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Op k takes effect at k ms (its linearization point) inside an interval of up to ±2 ms; process k mod
 * 10 runs it, so a process's ops never overlap. Reads return the value at their point, except one read
 * near the end that returns a value overwritten long before: the history is not linearizable there.
 */
function generate(n: number): HistoryEvent[] {
  const rand = rng(7);
  type Ev = Omit<HistoryEvent, 'index' | 'time'> & { time: number };
  const evs: Ev[] = [];
  let value: number | null = null;
  let first: number | null = null;
  const stale = Math.floor(n * 0.9);
  for (let k = 0; k < n; k++) {
    const at = (k + 10) * MS;
    const start = at - Math.floor(rand() * 2 * MS);
    const end = at + Math.floor(rand() * 2 * MS) + 1;
    const process = k % 10;
    const node = `n${(process % 5) + 1}`;
    const write = rand() < 0.3;
    const window = Math.floor(at / (20_000 * MS));
    const faulty = at % (20_000 * MS) >= 5_000 * MS && at % (20_000 * MS) < 11_000 * MS;
    const epoch = faulty ? [`w${window + 1}`] : null;
    if (write) {
      value = k;
      first ??= k;
      evs.push({ type: 'invoke', f: 'write', value: k, process, time: start, node, faultEpoch: epoch });
      evs.push({ type: 'ok', f: 'write', value: k, process, time: end, node, faultEpoch: epoch });
    } else {
      const seen = k === stale ? first : value;
      evs.push({ type: 'invoke', f: 'read', value: null, process, time: start, node, faultEpoch: epoch });
      evs.push({ type: 'ok', f: 'read', value: seen, process, time: end, node, faultEpoch: epoch });
    }
  }
  // Fault windows: isolate one node from 5 s to 11 s of every 20 s.
  const span = (n + 10) * MS;
  for (let w = 0; w * 20_000 * MS + 5_000 * MS < span; w++) {
    const t0 = w * 20_000 * MS + 5_000 * MS;
    const id = `w${w + 1}`;
    const victim = `n${(w % 5) + 1}`;
    const others = ['n1', 'n2', 'n3', 'n4', 'n5'].filter((x) => x !== victim).join(' ');
    const base = { process: 'nemesis' as const, node: null, faultEpoch: null };
    evs.push({
      ...base,
      type: 'info',
      f: 'start-partition',
      value: { topology: 'one' },
      time: t0 - 100 * MS,
    });
    evs.push({
      ...base,
      type: 'info',
      f: 'start-partition',
      value: {
        id,
        fault: 'partition',
        nodes: [victim],
        what: `${victim} isolated from ${others}`,
        landed: true,
      },
      time: t0,
    });
    evs.push({ ...base, type: 'info', f: 'stop-partition', value: null, time: t0 + 6_000 * MS });
    evs.push({ ...base, type: 'info', f: 'stop-partition', value: { healed: [id] }, time: t0 + 6_200 * MS });
  }
  // Events in time order (stable: an op's invoke stays before its completion).
  const order = evs.map((e, i) => ({ e, i })).sort((a, b) => a.e.time - b.e.time || a.i - b.i);
  return order.map(({ e }, index) => ({ ...e, index }) as HistoryEvent);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] as number;

async function main(): Promise<void> {
  const missing = browserMissing();
  if (missing) throw new Error(missing);
  const keep = arg('--keep');
  if (keep) mkdirSync(keep, { recursive: true });
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'faultline-bench-pages-'));
  try {
    const events = generate(N);
    const paired = pairEvents(events);
    const faults = faultBands(paired.ops, events);
    const linPath = join(dir, 'linearizability.html');
    let t0 = performance.now();
    const r = await linearizabilityChecker.check(
      paired.ops,
      { model: 'register', htmlPath: linPath, htmlBudgetMs: 0 },
      { faults },
    );
    const linWriteMs = performance.now() - t0;
    if (r.valid !== false)
      throw new Error(`the generated history should not be linearizable (got ${r.valid})`);
    const tlPath = join(dir, 'timeline.html');
    t0 = performance.now();
    writeFileSync(tlPath, renderTimeline(paired.ops, { faults }));
    const tlWriteMs = performance.now() - t0;
    const failing = r.anomalies[0]?.ops?.[0] as number;
    const browser = await launchBrowser();
    const pages = [
      {
        name: 'linearizability',
        path: linPath,
        url: pathToFileURL(linPath).href,
        writeMs: linWriteMs,
        chart: 'charts[0]',
      },
      {
        name: 'timeline',
        path: tlPath,
        url: `${pathToFileURL(tlPath).href}#op=${failing}`,
        writeMs: tlWriteMs,
        chart: 'chart',
      },
    ];
    const out: Record<string, unknown>[] = [];
    try {
      for (const p of pages) {
        const loads: number[] = [];
        const redraws: number[] = [];
        let focus: string | null = null;
        for (let i = 0; i < runs; i++) {
          const page = await browser.open(p.url);
          await page.waitForSelector('.ln-focus', { state: 'visible' });
          loads.push(
            await page.evaluate(
              '(() => { const nav = performance.getEntriesByType("navigation")[0]; return nav ? nav.loadEventEnd : NaN; })()',
            ),
          );
          redraws.push(
            await page.evaluate(
              `(() => { const c = ${p.chart}; const t = performance.now(); for (let i = 0; i < 20; i++) { c.scroller.scrollLeft += 300; c.draw(); } return (performance.now() - t) / 20; })()`,
            ),
          );
          focus = await page.getAttribute('.ln-focus', 'data-op');
          await page.close();
        }
        out.push({
          page: p.name,
          ops: N,
          bytes: statSync(p.path).size,
          writeMs: Math.round(p.writeMs),
          loadMs: Math.round(median(loads)),
          redrawMs: Number(median(redraws).toFixed(2)),
          focusOp: Number(focus),
          failingOp: failing,
        });
      }
    } finally {
      await browser.close();
    }
    if (json) {
      process.stdout.write(`${JSON.stringify({ runs, loadavg: loadavg()[0], pages: out })}\n`);
      return;
    }
    process.stdout.write(
      `op pages, ${N.toLocaleString('en-US')} ops (median of ${runs} loads; load average ${loadavg()[0]?.toFixed(1)})\n`,
    );
    for (const o of out)
      process.stdout.write(
        `  ${String(o.page).padEnd(16)} ${((o.bytes as number) / 1e6).toFixed(1)} MB, ${o.page === 'linearizability' ? 'checked and written' : 'written'} in ${o.writeMs} ms, loaded in ${o.loadMs} ms, redraw ${o.redrawMs} ms, opens at op ${o.focusOp} (failing op ${o.failingOp})\n`,
      );
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
