/**
 * The fixtures pass of bench:linearizability run from the built package (dist/) in plain Node, no tsx:
 * the checker's own memory footprint. Reads the fixture list (path, file, model, options, format,
 * expected verdict) as JSON on stdin from bench/linearizability.ts, loads and pairs every history, then
 * checks them all `runs` times, and prints JSON: RSS before loading (Node and the modules), with the
 * histories loaded, and the peak; CPU time of the checks; any verdict mismatch.
 */
import { readFileSync } from 'node:fs';

const dist = new URL('../dist/', import.meta.url);
const { checkOperations } = await import(new URL('checkers/linearizability/check.js', dist).href);
const { createModel } = await import(new URL('checkers/linearizability/models/index.js', dist).href);
const { loadHistory } = await import(new URL('src/core/history/read.js', dist).href);
const { pairEvents } = await import(new URL('src/core/history/pair.js', dist).href);

const mb = (bytes) => Number((bytes / 1024 / 1024).toFixed(1));
const { fixtures, runs } = JSON.parse(readFileSync(0, 'utf8'));
const baselineRssMb = mb(process.memoryUsage().rss);
const loaded = [];
for (const f of fixtures)
  loaded.push({ ...f, ops: pairEvents(await loadHistory(f.file, { format: f.format })).ops });
const loadedRssMb = mb(process.memoryUsage().rss);
const mismatches = new Set();
const cpu0 = process.cpuUsage();
for (let pass = 0; pass < runs; pass++) {
  for (const h of loaded) {
    const outcome = await checkOperations(createModel(h.model, h.options), h.ops, { workers: 0 });
    if (outcome.valid !== h.linearizable) mismatches.add(h.path);
  }
}
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  JSON.stringify({
    baselineRssMb,
    loadedRssMb,
    peakRssMb: mb(process.resourceUsage().maxRSS * 1024),
    cpuMsPerPass: Number(((cpu.user + cpu.system) / 1000 / runs).toFixed(1)),
    mismatches: [...mismatches],
  }),
);
