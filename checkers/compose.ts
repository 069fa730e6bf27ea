import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Operation } from '../src/core/history/operation.ts';
import { errorMessage, UserError } from '../src/core/util/errors.ts';
import { optionsIssue } from '../src/core/util/options.ts';
import { checkers, type LoadedChecker } from './registry.ts';
import {
  type CheckContext,
  type Checker,
  type CheckResult,
  mergeValidity,
  type OpSink,
  type StreamIntake,
  type Validity,
} from './types.ts';

/**
 * Jepsen's `compose` and `check-safe`: run several checkers over one history and merge their validity
 * with priority false > unknown > true. A checker that throws (bad options, a bug, an aborted search)
 * becomes `valid: 'unknown'` carrying the error; composition itself never throws for a checker's sake.
 */

export interface ComposedResult {
  valid: Validity;
  /** One result per checker, in the order given. */
  results: Record<string, CheckResult>;
}

export interface ComposeOptions {
  /**
   * Errors to let through instead of turning into 'unknown' (the CLI passes bad-input errors, so a
   * checker refusing its options exits 254 rather than 2).
   */
  rethrow?: (err: unknown) => boolean;
}

export interface ComposeEntry {
  checker: Checker<never>;
  options?: unknown;
}

/** Run one checker and never throw: an exception yields 'unknown' with the error message. */
export async function checkSafe(
  name: string,
  checker: Checker<never>,
  ops: readonly Operation[],
  options: unknown,
  ctx?: CheckContext,
  opts?: ComposeOptions,
): Promise<CheckResult> {
  if (!ops.some((op) => op.process !== 'nemesis')) return nothingToCheck(name, ops.length);
  try {
    const r = await (checker as Checker<unknown>).check(ops, options ?? {}, ctx);
    return { ...r, checker: r.checker || name };
  } catch (err) {
    if (opts?.rethrow?.(err)) throw err;
    return didNotFinish(name, err);
  }
}

/**
 * The result for a history with no client op (only `opCount` nemesis ops, or none): valid, as Knossos
 * and Porcupine answer, because no op can violate anything; the evidence says the claim is vacuous.
 * "The workload did nothing" is a finding about a run, not about a history: run and test add the
 * workload activity check (src/app/test/checks.ts), which keeps such a run from passing.
 */
function nothingToCheck(name: string, opCount: number): CheckResult {
  return {
    checker: name,
    valid: true,
    evidence: `${name}: vacuously valid: the history has 0 client operations (${opCount} nemesis operation(s)), so there is nothing that could violate it`,
    scope: 'nothing: a claim about 0 client operations is vacuous',
    anomalies: [],
    stats: { opsConsumed: 0, vacuous: true },
  };
}

function didNotFinish(name: string, err: unknown): CheckResult {
  return {
    checker: name,
    valid: 'unknown',
    evidence: `${name}: did not finish: ${errorMessage(err)}`,
    scope: 'nothing: the checker failed before reaching a verdict',
    anomalies: [],
    stats: { opsConsumed: 0 },
    error: errorMessage(err),
  };
}

/**
 * Run `{name: {checker, options}}` concurrently (async checkers overlap; CPU-bound ones run in turn on
 * the event loop) and merge. Names are the keys, so one checker may appear twice with different options.
 */
export async function compose(
  entries: Record<string, ComposeEntry | Checker<never>>,
  ops: readonly Operation[],
  ctx?: CheckContext,
  opts?: ComposeOptions,
): Promise<ComposedResult> {
  const names = Object.keys(entries);
  const settled = await Promise.all(
    names.map((name) => {
      const e = entries[name] as ComposeEntry | Checker<never>;
      const entry: ComposeEntry = 'checker' in e ? e : { checker: e };
      return checkSafe(name, entry.checker, ops, entry.options, ctx, opts);
    }),
  );
  const results: Record<string, CheckResult> = {};
  names.forEach((name, i) => {
    results[name] = settled[i] as CheckResult;
  });
  return { valid: mergeValidity(settled.map((r) => r.valid)), results };
}

/** Build a checker out of a composition, so compositions nest (Jepsen's compose is itself a checker). */
export function composedChecker(
  name: string,
  entries: Record<string, ComposeEntry | Checker<never>>,
): Checker {
  return {
    name,
    async check(ops, _options, ctx) {
      const { valid, results } = await compose(entries, ops, ctx);
      const all = Object.values(results);
      return {
        checker: name,
        valid,
        evidence: all.map((r) => r.evidence).join('; '),
        scope: all.map((r) => `${r.checker}: ${r.scope}`).join(' '),
        anomalies: all.flatMap((r) => r.anomalies.map((a) => ({ ...a, checker: r.checker }))),
        stats: {
          opsConsumed: all.reduce((m, r) => Math.max(m, r.stats.opsConsumed), 0),
          results,
        },
      };
    },
  };
}

/**
 * Jepsen's `independent` checker as a combinator: the client ops of each key checked on their own by
 * `inner` (renumbered densely, as checkers expect), results merged false > unknown > true. Anomalies carry
 * their key; their ops are event indices, the same in the key's ops as in the whole history. Artifacts go
 * to <outDir>/independent/<key>/.
 */
export function independent(name: string, inner: Checker<never>): Checker<never> {
  return {
    name,
    async check(ops, options, ctx) {
      const byKey = new Map<string, Operation[]>();
      let client = 0;
      for (const op of ops) {
        if (op.process === 'nemesis') continue;
        client++;
        const k = op.key ?? '';
        const list = byKey.get(k);
        if (list) list.push(op);
        else byKey.set(k, [op]);
      }
      const perKey: { key: string; r: CheckResult }[] = [];
      for (const [key, keyOps] of byKey) {
        const renumbered = keyOps.map((o, i) => ({ ...o, id: i }));
        const outDir = ctx?.outDir
          ? join(ctx.outDir, 'independent', key.replace(/[^A-Za-z0-9_.-]/g, '_') || '_')
          : undefined;
        if (outDir) mkdirSync(outDir, { recursive: true });
        const keyCtx: CheckContext = { ...ctx, ...(outDir && { outDir }), key };
        perKey.push({ key, r: await checkSafe(name, inner, renumbered, options, keyCtx) });
      }
      return mergePerKey(name, perKey, client);
    },
  };
}

function mergePerKey(
  name: string,
  perKey: readonly { key: string; r: CheckResult }[],
  clientOps: number,
): CheckResult {
  const bad = perKey.filter((p) => p.r.valid === false);
  const unknown = perKey.filter((p) => p.r.valid === 'unknown');
  const first = bad[0] ?? unknown[0];
  return {
    checker: name,
    valid: mergeValidity(perKey.map((p) => p.r.valid)),
    evidence:
      `${name} per key: ${perKey.length} keys, ${clientOps} ops, ${bad.length} invalid, ${unknown.length} unknown` +
      (first ? `; key ${first.key}: ${first.r.evidence}` : ''),
    scope:
      `${perKey[0]?.r.scope ?? ''} Keys are checked independently: anomalies that span keys are invisible.`.trim(),
    anomalies: perKey.flatMap((p) => p.r.anomalies.map((a) => ({ ...a, key: p.key }))),
    stats: {
      opsConsumed: perKey.reduce((n, p) => n + p.r.stats.opsConsumed, 0),
      keys: perKey.length,
      invalidKeys: bad.map((p) => p.key),
      unknownKeys: unknown.map((p) => p.key),
    },
    ...(first?.r.error && { error: `key ${first.key}: ${first.r.error}` }),
    artifacts: perKey.flatMap((p) => p.r.artifacts ?? []),
  };
}

/** One checker to run by name: its options, and whether to check each key on its own. */
export interface CheckerRequest {
  name: string;
  options?: Record<string, unknown>;
  independent?: boolean;
}

export interface RunCheckersOptions {
  /**
   * Options a checker refuses: `throw` (the CLI: bad input, exit 254) or `unknown` (a run: that checker's
   * result is unknown with the reason, the others still run).
   */
  badOptions: 'throw' | 'unknown';
  /** Prefix for thrown errors, e.g. `--checker` or `S1: binding.checkers`. */
  where?: string;
}

/**
 * The one checker runner: names resolved through the registry, options validated by each checker's
 * schema, `independent` applied as a combinator, and everything run through `compose` (a checker that
 * throws gives 'unknown'). Results come back in request order.
 */
export async function runCheckers(
  requests: readonly CheckerRequest[],
  ops: readonly Operation[],
  ctx: CheckContext = {},
  o: RunCheckersOptions = { badOptions: 'unknown' },
): Promise<{ valid: Validity; results: CheckResult[] }> {
  const entries: Record<string, ComposeEntry> = {};
  const refused: Record<string, CheckResult> = {};
  const keys: string[] = [];
  for (const req of requests) {
    let key = req.name;
    for (let i = 2; keys.includes(key); i++) key = `${req.name}#${i}`;
    keys.push(key);
    const prepared = await prepare(req, o);
    if ('refused' in prepared) refused[key] = prepared.refused;
    else entries[key] = prepared;
  }
  const { results } = await compose(entries, ops, ctx, {
    rethrow: (err) => o.badOptions === 'throw' && err instanceof UserError,
  });
  const ordered = keys.map((k) => (refused[k] ?? results[k]) as CheckResult);
  return { valid: mergeValidity(ordered.map((r) => r.valid)), results: ordered };
}

/**
 * {@link runCheckers} over a history that streams: `feed` calls `add` for every op as it closes and
 * resolves to the number of ops; it may be called again (a checker's `ctx.replay`, without an intake)
 * and must then feed the same ops with plain values. Each checker gets its ops through its stream form,
 * so no Operation array is built. When every sink takes compact values ({@link OpSink.compactValues}),
 * `feed` is told so through its intake and may hand over values left as compact trees. Null when some
 * request has no stream form (or is `independent`): run the array path.
 * Results are those {@link runCheckers} gives on the same ops.
 */
export async function runCheckersOnStream(
  requests: readonly CheckerRequest[],
  feed: (add: (op: Operation) => void, intake?: StreamIntake) => Promise<number>,
  ctx: CheckContext = {},
  o: RunCheckersOptions = { badOptions: 'unknown' },
): Promise<{ valid: Validity; results: CheckResult[]; ops: number } | null> {
  const prepared: ComposeEntry[] = [];
  for (const req of requests) {
    if (req.independent) return null;
    const entry = await prepare(req, o);
    if ('refused' in entry || !entry.checker.stream) return null;
    prepared.push(entry);
  }
  const sinks: { name: string; sink: OpSink | null; err: unknown }[] = [];
  for (const [i, e] of prepared.entries()) {
    const name = (requests[i] as CheckerRequest).name;
    try {
      sinks.push({
        name,
        sink: await (e.checker as Checker<unknown>).stream!(e.options ?? {}, {
          ...ctx,
          replay: (add) => feed(add),
        }),
        err: null,
      });
    } catch (err) {
      sinks.push({ name, sink: null, err });
    }
  }
  // A sink that failed to start takes nothing, so it does not hold the others to plain values.
  const intake: StreamIntake = {
    compactValues: sinks.every((s) => s.sink === null || s.sink.compactValues === true),
  };
  let clientOps = 0;
  const count = await feed((op) => {
    if (op.process !== 'nemesis') clientOps++;
    for (const s of sinks) {
      if (!s.sink) continue;
      try {
        s.sink.add(op);
      } catch (err) {
        s.sink = null;
        s.err = err;
      }
    }
  }, intake);
  const rethrow = (err: unknown) => o.badOptions === 'throw' && err instanceof UserError;
  const results: CheckResult[] = [];
  for (const s of sinks) {
    if (clientOps === 0) {
      results.push(nothingToCheck(s.name, count));
      continue;
    }
    try {
      if (!s.sink) throw s.err;
      const r = await s.sink.finish();
      results.push({ ...r, checker: r.checker || s.name });
    } catch (err) {
      if (rethrow(err)) throw err;
      results.push(didNotFinish(s.name, err));
    }
  }
  return { valid: mergeValidity(results.map((r) => r.valid)), results, ops: count };
}

async function prepare(
  req: CheckerRequest,
  o: RunCheckersOptions,
): Promise<ComposeEntry | { refused: CheckResult }> {
  const where = o.where ? `${o.where}: ` : '';
  const refuse = (error: string) => {
    if (o.badOptions === 'throw') throw new UserError(`${where}${error}`);
    return { refused: notRun(req.name, error) };
  };
  const def = checkers.get(req.name);
  if (!def) return refuse(checkers.unknownMessage(req.name));
  let loaded: LoadedChecker;
  try {
    loaded = await def.load();
  } catch (err) {
    return refuse(`${def.name}: cannot load: ${errorMessage(err)}`);
  }
  let options: unknown = req.options ?? {};
  if (loaded.schema) {
    const parsed = loaded.schema.safeParse(options);
    if (!parsed.success) return refuse(`${def.name}: ${optionsIssue(parsed.error.issues)}`);
    options = parsed.data;
  }
  const checker = req.independent ? independent(def.name, loaded.checker) : loaded.checker;
  return { checker, options };
}

function notRun(name: string, error: string): CheckResult {
  return {
    checker: name,
    valid: 'unknown',
    evidence: `not run: ${error}`,
    scope: 'nothing was checked',
    anomalies: [],
    stats: { opsConsumed: 0 },
    error,
  };
}
