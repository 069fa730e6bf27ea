import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { parseEDNString } from 'edn-data';
import { execa } from 'execa';
import type { FaultRecord, Nemesis } from '../../nemeses/types.ts';
import { runChecks } from '../../src/app/test/checks.ts';
import { runTest } from '../../src/app/test/test-run.ts';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import { eventToEdn, resultsFromEdn, resultsToEdn } from '../../src/core/history/jepsen.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { loadHistory } from '../../src/core/history/read.ts';
import { parseHistoryText } from '../../src/core/history/read-foreign.ts';
import type { Client, ClientOp, Completion } from '../../src/lib/clients/types.ts';
import { makeWorkload } from '../../src/lib/workloads/index.ts';
import { memoryDb as db, NODES, nowhereRemote as remote } from '../helpers/memory-run.ts';

/**
 * Every run directory gets Jepsen's history.edn and results.edn beside the JSON files. These runs go
 * through `runTest` itself (the code `faultline test` and each scenario of `faultline run` use) against
 * an in-memory register store, with a nemesis that lands every fault, so the history has keyed client
 * ops, timeouts, failed compares and nemesis ops. The EDN must parse with a strict third-party reader
 * (edn-data), have Jepsen's shape, and give the same checker results when faultline reads it back.
 */
const scratch = mkdtempSync(join(tmpdir(), 'faultline-run-edn-'));
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));

const nemesis = (kind: string): Nemesis => ({
  kind,
  capabilities: async () => [],
  async inject(_r, spec, id): Promise<FaultRecord> {
    return { id, spec, nodes: spec.targets as string[], injectedAt: new Date().toISOString(), undo: {} };
  },
  evidence: async () => ({ landed: true, signals: [] }),
  heal: async () => {},
  verifyClean: async () => ({ clean: true, fixed: [], found: [] }),
});

/**
 * Registers in memory, one per key (missing keys read as nil, as the real clients record them). Every
 * 7th op times out (info); with `stale`, some reads return the value before the last write.
 */
class MemoryRegisters implements Client {
  readonly reusable = true;
  private n = 0;
  constructor(
    private readonly store: Map<string, { now: unknown; before: unknown }>,
    private readonly stale: boolean,
  ) {}
  async open(): Promise<Client> {
    return this;
  }
  async setup(): Promise<void> {}
  async teardown(): Promise<void> {}
  async close(): Promise<void> {}
  async invoke(op: ClientOp): Promise<Completion> {
    await new Promise((r) => setTimeout(r, 1 + (this.n % 3)));
    const i = ++this.n;
    const key = op.key ?? 'r';
    const cell = this.store.get(key) ?? { now: null, before: null };
    if (op.f === 'read') return { type: 'ok', value: this.stale && i % 5 === 0 ? cell.before : cell.now };
    if (i % 7 === 0) return { type: 'info', error: 'timeout' };
    if (op.f === 'write') {
      this.store.set(key, { now: op.value, before: cell.now });
      return { type: 'ok' };
    }
    const [from, to] = op.value as [unknown, unknown];
    if (cell.now !== from) return { type: 'fail', error: 'cas-mismatch' };
    this.store.set(key, { now: to, before: cell.now });
    return { type: 'ok' };
  }
}

async function run(workload: string, stale: boolean, seed: number) {
  const outDir = join(scratch, `${workload}-${seed}`);
  const store = new Map();
  const result = await runTest({
    remote,
    db,
    makeClient: () => new MemoryRegisters(store, stale),
    workload,
    faults: ['partition'],
    nemesisIntervalS: 0.3,
    nemesisDelayS: 0.2,
    timeLimitS: 1.5,
    concurrency: 3,
    rate: 200,
    seed,
    outDir,
    opTimeoutMs: 1000,
    recoveryS: 0,
    lookupNemesis: async (kind) => nemesis(kind),
  });
  return { outDir, result };
}

/** edn-data, strictly: every top-level value of the file (wrapped in a list, its documented way). */
function strictParse(text: string): unknown[] {
  return parseEDNString(`(${text}\n)`, {
    mapAs: 'object',
    keywordAs: 'string',
    listAs: 'array',
    setAs: 'array',
  }) as unknown[];
}

/** A result without what legitimately differs between two checks (timings, artifact paths). */
function comparable(r: Record<string, unknown>) {
  const { artifacts: _a, stats, ...rest } = r;
  const { elapsedMs: _e, ...keptStats } = (stats ?? {}) as Record<string, unknown>;
  return { ...rest, stats: keptStats };
}

test('faultline test writes Jepsen history.edn and results.edn; both read back to the same results', async (t) => {
  const { outDir, result } = await run('multi-register', true, 7);
  t.is(result.valid, false, 'stale reads make the run invalid');
  for (const f of ['history.jsonl', 'results.json', 'history.edn', 'results.edn'])
    t.true(existsSync(join(outDir, f)), f);

  // A strict reader takes both files, and the ops have Jepsen's shape.
  const ops = strictParse(readFileSync(join(outDir, 'history.edn'), 'utf8')) as Record<string, unknown>[];
  const jsonl = await loadHistory(join(outDir, 'history.jsonl'));
  t.is(ops.length, jsonl.length);
  ops.forEach((op, i) => {
    t.is(op.index, i);
    t.is(typeof op.time, 'number');
    t.true(['invoke', 'ok', 'fail', 'info'].includes(op.type as string));
  });
  const nemesisOps = ops.filter((o) => o.process === 'nemesis');
  t.true(nemesisOps.length >= 4, 'nemesis ops recorded');
  t.true(
    nemesisOps.every((o) => o.type === 'info'),
    'nemesis ops are :info, as Jepsen records them',
  );
  const client = ops.filter((o) => typeof o.process === 'number');
  t.true(
    client.every((o) => Array.isArray(o.value) && (o.value as unknown[])[0] === o.key),
    'independent keys are [k v] tuples',
  );
  t.true(client.some((o) => o.type === 'info' && o.error === 'timeout'));
  t.true(client.some((o) => o.type === 'fail' && o.error === 'cas-mismatch'));
  const resultsEdn = strictParse(readFileSync(join(outDir, 'results.edn'), 'utf8'))[0] as Record<
    string,
    unknown
  >;
  t.is(resultsEdn['valid?'], false);

  // results.edn is results.json.
  const resultsJson = JSON.parse(readFileSync(join(outDir, 'results.json'), 'utf8'));
  t.deepEqual(resultsFromEdn(readFileSync(join(outDir, 'results.edn'), 'utf8')), resultsJson);

  // history.edn gives the same events' operations and the same checker results.
  const fromEdn = pairEvents(await loadHistory(join(outDir, 'history.edn')));
  const fromJsonl = pairEvents(jsonl);
  t.deepEqual(fromEdn.ops, fromJsonl.ops);
  const workload = makeWorkload('multi-register', { nodes: NODES, concurrency: 3 });
  const again = await runChecks(fromEdn, workload.checkers, result.faults as FaultRecord[], scratch);
  t.is(again.valid, resultsJson.valid);
  t.deepEqual(
    again.results.map((r) => comparable(r as never)),
    (resultsJson.results as Record<string, unknown>[]).map(comparable),
  );
  const lin = again.results.find((r) => r.checker === 'linearizable');
  t.is(lin?.valid, false);
  t.true((lin?.anomalies.length ?? 0) > 0);
});

test('faultline check on history.edn gives the run’s linearizability result', async (t) => {
  const { outDir, result } = await run('register', false, 3);
  t.is(result.valid, true, JSON.stringify(result.results.map((r) => r.evidence)));
  const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
  const r = await execa(
    'node',
    [
      bin,
      'check',
      join(outDir, 'history.edn'),
      '--checker',
      'linearizable',
      '--model',
      'cas-register',
      '--nil-read',
      'value',
      '--failed-cas',
      'mismatch',
      '--json',
    ],
    { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } },
  );
  t.is(r.exitCode, 0, r.stderr);
  const checked = (JSON.parse(r.stdout) as { results: Record<string, Record<string, unknown>> }).results
    .linearizable as Record<string, unknown>;
  const recorded = (
    JSON.parse(readFileSync(join(outDir, 'results.json'), 'utf8')).results as Record<string, unknown>[]
  ).find((x) => x.checker === 'linearizable') as Record<string, unknown>;
  t.deepEqual(comparable(checked), comparable(recorded));
});

test('writer rules: independent tuples, nemesis :info, and results that read back to the same data', (t) => {
  const ev = (e: Partial<HistoryEvent>): HistoryEvent =>
    ({
      index: 0,
      type: 'invoke',
      f: 'read',
      value: null,
      process: 0,
      time: 0,
      node: null,
      faultEpoch: null,
      ...e,
    }) as HistoryEvent;
  const events = [
    ev({ index: 0, type: 'invoke', f: 'start-partition', value: { targets: 'one' }, process: 'nemesis' }),
    ev({ index: 1, type: 'invoke', f: 'cas', value: [3, 1], key: '3' }),
    ev({ index: 2, type: 'info', f: 'start-partition', value: { landed: true }, process: 'nemesis' }),
    ev({ index: 3, type: 'fail', f: 'cas', value: [3, 1], key: '3', error: 'cas-mismatch' }),
    ev({ index: 4, type: 'invoke', f: 'write', value: ['x', 5], key: 'x', process: 1 }),
    ev({ index: 5, type: 'ok', f: 'write', value: ['x', 5], key: 'x', process: 1 }),
  ];
  const text = events.map((e) => `${eventToEdn(e)}\n`).join('');
  t.regex(text, /^\{:index 0, :time 0, :type :info, :process :nemesis, :f :start-partition/);
  t.regex(text, /:value \["3" \[3 1\]\], :key "3", :error :cas-mismatch/);
  // A value that is itself a [k v] pair is wrapped once more, so it reads back whole.
  t.regex(text, /:value \[:x \[:x 5\]\]/);
  const back = parseHistoryText(text, 'edn');
  t.deepEqual(
    back.map((e) => [e.type, e.key, e.value]),
    events.map((e) => [e.process === 'nemesis' && e.type === 'invoke' ? 'info' : e.type, e.key, e.value]),
  );
  t.deepEqual(
    pairEvents(back).ops.map((o) => [o.process, o.f, o.type, o.input]),
    pairEvents(events).ops.map((o) => [o.process, o.f, o.type, o.input]),
  );
  // An op map whose :key does not head its value (EDN written before tuples) keeps its value.
  const [legacy] = parseHistoryText('{:type :invoke, :process 0, :f :cas, :value [3 1], :key "3"}', 'edn');
  t.deepEqual(legacy?.value, [3, 1]);

  const results = {
    valid: 'unknown',
    results: [
      {
        checker: 'linearizable',
        valid: false,
        evidence: 'a "quoted"\nline → n1',
        stats: { '0': 1, n1: 'n1' },
      },
      { checker: 'faults', valid: true, anomalies: [], nested: { valid: 'unknown' } },
    ],
    perf: null,
  };
  const edn = resultsToEdn(results);
  t.regex(edn, /^\{:valid\? :unknown,\n :results \[\{:checker :linearizable, :valid\? false/);
  t.deepEqual(resultsFromEdn(edn), results);
  t.is((strictParse(edn)[0] as Record<string, unknown>)['valid?'], 'unknown');
});
