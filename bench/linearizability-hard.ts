/**
 * Knossos-hard register histories, faultline beside Go Porcupine under the same per-history budget.
 *
 * The histories come from the cas-register generator (checkers/linearizability/generate.ts), whose
 * answers are known by construction: every op is applied at a point inside its interval, so a history is
 * linearizable; a `stale` history has one read return a value an ok write overwrote before the read
 * began, with unique values (no op can write it back), so it is not. The grid: 20, 50 and 100 client
 * processes, 10 %, 25 % and 40 % of writes and cas ops crashed (`info`: half took effect, half did not;
 * each crash starts a fresh process, so crashed ops pile up as concurrent forever-open ops, which is
 * what makes the search hard), values reused from 0..4 for the linearizable ones. Both checkers read
 * the same file (Porcupine's etcd log format) with the same semantics (a nil read sees no value, a failed
 * cas saw another value). Each check runs in its own process, faultline and Go alternating which goes
 * first; the figure is the check's own CPU time, reading excluded.
 *
 * Reported: how many histories each decides within the budget, any wrong answer (the run fails), the
 * median of faultline's CPU time over Go's on the histories both decide, and with `--largest` the
 * largest history of one setting each decides within `--largest-budget` (doubling the size).
 *
 *   FAULTLINE_PORCUPINE_SRC=DIR npm run bench:hard [-- --ops 500,2000] [--budget 10s] [--seeds 1]
 *                                                    [--largest] [--largest-budget 60s] [--max-ops 256000]
 *
 * Without Go or Porcupine's source the Go column is skipped with the reason and faultline runs alone.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkPrepared } from '../checkers/linearizability/check.ts';
import {
  type CasRegisterGenOptions,
  type GeneratedInfo,
  generateCasRegisterEvents,
} from '../checkers/linearizability/generate.ts';
import { createModel } from '../checkers/linearizability/models/index.ts';
import { parseDuration } from '../src/core/util/duration.ts';
import { PORCUPINE_ETCD } from '../test/linearizability/porcupine-fixtures.ts';
import { median, resultsDir } from './figures.ts';
import { type GoOne, goPorcupine } from './go-porcupine.ts';
import { etcdLine, streamPrepared } from './linearizability-generated.ts';

type Result = GoOne['result'];

interface HardCase {
  name: string;
  gen: CasRegisterGenOptions;
  expected: Result;
}

interface Row {
  name: string;
  ops: number;
  expected: Result;
  faultline: GoOne;
  go: GoOne | null;
}

/** The child's side: one file checked by faultline under a budget. */
async function checkWithFaultline(file: string, budgetMs: number): Promise<GoOne> {
  const model = createModel('cas-register', PORCUPINE_ETCD);
  if (!model) throw new Error('cas-register');
  const prepared = await streamPrepared(file, 'porcupine-etcd', model);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const outcome = await checkPrepared(model, prepared, { timeoutMs: budgetMs, workers: 0 });
  const cpu = process.cpuUsage(cpu0);
  const result: Result = outcome.valid === true ? 'ok' : outcome.valid === false ? 'illegal' : 'unknown';
  return { result, wallMs: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
}

const self = fileURLToPath(import.meta.url);
function faultlineChild(file: string, budgetMs: number): GoOne {
  const out = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--max-old-space-size=8192', self, '--case', file, String(budgetMs)],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  if (out.status !== 0) throw new Error(`faultline on ${file} failed: ${out.stderr}`);
  return JSON.parse(out.stdout) as GoOne;
}

/** Writes the case's history as an etcd log; its expected answer follows from what the generator did. */
async function writeCase(dir: string, c: HardCase): Promise<{ file: string; expected: Result }> {
  const file = join(dir, `${c.name.replace(/[^a-z0-9]+/gi, '-')}-${c.gen.ops}.log`);
  const info: GeneratedInfo = {};
  const out = createWriteStream(file);
  for (const batch of generateCasRegisterEvents(c.gen, 8192, info)) {
    let text = '';
    for (const ev of batch) text += etcdLine(ev);
    if (!out.write(text)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  // A stale read is injected only where the generator found a place for one.
  const expected = c.gen.staleRead && info.staleReadInvoke === undefined ? 'ok' : c.expected;
  return { file, expected };
}

function grid(ops: number, seeds: number): HardCase[] {
  const cases: HardCase[] = [];
  for (let seed = 1; seed <= seeds; seed++)
    for (const processes of [20, 50, 100])
      for (const infoRate of [0.1, 0.25, 0.4]) {
        const base = { ops, processes, infoRate, seed: seed * 1000 + processes + infoRate * 100 };
        cases.push(
          {
            name: `p${processes} info${infoRate} reused s${seed}`,
            gen: { ...base, values: 5 },
            expected: 'ok',
          },
          {
            name: `p${processes} info${infoRate} stale s${seed}`,
            gen: { ...base, values: 0, staleRead: true },
            expected: 'illegal',
          },
        );
      }
  return cases;
}

const fmt = (o: GoOne | null) =>
  o === null ? '-'.padStart(22) : `${o.result.padEnd(8)} ${o.cpuMs.toFixed(0).padStart(7)} ms CPU`;

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    options: {
      ops: { type: 'string', default: '500,2000' },
      budget: { type: 'string', default: '10s' },
      seeds: { type: 'string', default: '1' },
      largest: { type: 'boolean', default: false },
      'largest-budget': { type: 'string', default: '60s' },
      'max-ops': { type: 'string', default: '256000' },
      results: { type: 'string' },
    },
  });
  const budgetMs = parseDuration(a.budget, '--budget');
  const go = goPorcupine();
  const goOne = 'checkOne' in go ? go.checkOne : null;
  console.log(
    `bench:hard — ${a.ops} ops per history, budget ${a.budget} each, load ${loadavg()[0]?.toFixed(1)}; ` +
      (goOne
        ? `Go Porcupine (${'version' in go ? go.version : ''})`
        : `Go Porcupine skipped: ${(go as { skipped: string }).skipped}`),
  );
  const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-hard-'));
  const rows: Row[] = [];
  try {
    let i = 0;
    for (const c of a.ops.split(',').flatMap((n) => grid(Number(n), Number(a.seeds)))) {
      const { file, expected } = await writeCase(dir, c);
      // Alternate which checker goes first, so neither always runs on a warmer or quieter host.
      let faultline: GoOne;
      let goResult: GoOne | null = null;
      if (i++ % 2 === 0) {
        faultline = faultlineChild(file, budgetMs);
        goResult = goOne ? goOne(file, budgetMs) : null;
      } else {
        goResult = goOne ? goOne(file, budgetMs) : null;
        faultline = faultlineChild(file, budgetMs);
      }
      rows.push({ name: c.name, ops: c.gen.ops, expected, faultline, go: goResult });
      console.log(
        `  ${c.name.padEnd(26)} expected ${expected.padEnd(8)} faultline ${fmt(faultline)}   go ${fmt(goResult)}`,
      );
      rmSync(file);
    }
    const wrong = rows.flatMap((r) =>
      [['faultline', r.faultline] as const, ['go', r.go] as const]
        .filter(([, o]) => o !== null && o.result !== 'unknown' && o.result !== r.expected)
        .map(([who, o]) => `${who} answered ${o?.result} on ${r.name} (expected ${r.expected})`),
    );
    const decided = (pick: (r: Row) => GoOne | null) =>
      rows.filter((r) => (pick(r)?.result ?? 'unknown') !== 'unknown').length;
    const both = rows.filter((r) => r.go && r.go.result !== 'unknown' && r.faultline.result !== 'unknown');
    const ratios = both.map((r) => r.faultline.cpuMs / Math.max(0.001, (r.go as GoOne).cpuMs));
    console.log(
      `decided within ${a.budget}: faultline ${decided((r) => r.faultline)} of ${rows.length}` +
        (goOne ? `, Go ${decided((r) => r.go)} of ${rows.length}` : '') +
        (both.length > 0
          ? `; on the ${both.length} both decide, faultline's CPU time over Go's: median ${median(ratios).toFixed(3)}× (target ≤ 0.5×)`
          : ''),
    );
    const largest = a.largest
      ? {
          faultline: await largestDecided(dir, 'faultline', (f, b) => faultlineChild(f, b), a),
          go: goOne ? await largestDecided(dir, 'go', goOne, a) : null,
        }
      : null;
    const out = resultsDir();
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, 'linearizability-hard.json'),
      `${JSON.stringify({ budgetMs, rows, wrong, medianRatio: ratios.length ? median(ratios) : null, largest }, null, 2)}\n`,
    );
    if (wrong.length > 0) {
      for (const w of wrong) console.error(`WRONG ANSWER: ${w}`);
      process.exitCode = 1;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The largest history of one grid setting (20 processes, 25 % crashed, values reused: one both
 * checkers decide at small sizes) that one checker decides within the budget, doubling from 250 ops
 * until it gives up or `--max-ops`.
 */
async function largestDecided(
  dir: string,
  who: string,
  check: (file: string, budgetMs: number) => GoOne,
  a: { 'largest-budget': string; 'max-ops': string },
): Promise<{ ops: number; cpuMs: number } | null> {
  const budgetMs = parseDuration(a['largest-budget'], '--largest-budget');
  let best: { ops: number; cpuMs: number } | null = null;
  for (let ops = 250; ops <= Number(a['max-ops']); ops *= 2) {
    const c: HardCase = {
      name: 'largest p20 info0.25 reused',
      gen: { ops, processes: 20, infoRate: 0.25, values: 5, seed: 42 },
      expected: 'ok',
    };
    const { file } = await writeCase(dir, c);
    const r = check(file, budgetMs);
    rmSync(file);
    console.log(`  largest ${who.padEnd(9)} ${String(ops).padStart(7)} ops: ${fmt(r)}`);
    if (r.result === 'unknown') break;
    if (r.result !== 'ok')
      throw new Error(`${who} answered ${r.result} on a linearizable history of ${ops} ops`);
    best = { ops, cpuMs: r.cpuMs };
  }
  console.log(
    `largest decided within ${a['largest-budget']} by ${who}: ${best ? `${best.ops} ops` : 'none'}`,
  );
  return best;
}

// Last, so every declaration above is initialised: a child checks one file, the parent runs the bench.
const caseAt = process.argv.indexOf('--case');
if (caseAt >= 0) {
  const [file, budget] = process.argv.slice(caseAt + 1);
  process.stdout.write(JSON.stringify(await checkWithFaultline(file as string, Number(budget))));
} else {
  await main();
}
