import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { UserError } from '../../core/util/errors.ts';
import { regularInput } from '../../core/util/input-file.ts';
import { LATEST, SESSION_NAME } from '../report/session-dir.ts';
import { isNotSelected } from '../verdict/aggregate.ts';

/**
 * Reading a session store (`<root>/<name>/<UTC timestamp>/`, see ../report/session-dir.ts) as files: the
 * sessions of each name, oldest first, each summarised from its `findings/report.json` (`faultline run`)
 * or its `results.json` (`faultline test`). Nothing here writes. Older report.json versions are read
 * leniently: what a summary needs has been there since version 1.
 */

export interface RowSummary {
  id: string;
  verdict: string;
  /** success / failure / concern; null for rows a version-1 report cannot classify. */
  outcome: 'success' | 'failure' | 'concern' | null;
  expected: string[] | null;
  opsPerSec: number | null;
  p99Ms: number | null;
  anomalies: number | null;
}

export interface SessionSummary {
  name: string;
  /** The directory name: its UTC timestamp. */
  id: string;
  dir: string;
  kind: 'run' | 'test';
  startedAt: string | null;
  /** DONE / FAIL / … for `run`; valid / INVALID / unknown for `test`; `unreadable` when neither file parses. */
  verdict: string;
  headline: string;
  rows: RowSummary[];
}

const reportRow = z.looseObject({
  id: z.string(),
  verdict: z.string(),
  outcome: z.enum(['success', 'failure', 'concern']).optional(),
  expectationMet: z.boolean().nullable().optional(),
  expected: z.array(z.string()).nullable().optional(),
  figures: z
    .looseObject({ opsPerSec: z.number(), latencyMs: z.looseObject({ p99: z.number().nullable() }) })
    .nullable()
    .optional(),
  counts: z.looseObject({ anomalies: z.looseObject({ total: z.number() }) }).optional(),
  reasons: z.array(z.string()).optional(),
});
const reportFile = z.looseObject({
  schemaVersion: z.number(),
  session: z.looseObject({ startedAt: z.string() }),
  sessionVerdict: z.string(),
  headline: z.string(),
  scenarios: z.array(reportRow),
});
const resultsFile = z.looseObject({
  valid: z.union([z.boolean(), z.literal('unknown')]),
  stats: z.looseObject({ invoked: z.number() }).optional(),
  elapsedS: z.number().optional(),
  results: z.array(z.looseObject({ checker: z.string(), valid: z.union([z.boolean(), z.string()]) })),
  perf: z
    .looseObject({ stats: z.looseObject({}).optional() })
    .nullable()
    .optional(),
});

/** Reads a JSON file, or its gzip-compressed twin (`<file>.gz`) when `faultline sessions compress` ran. */
/** A session's JSON file is at most this large (a report.json is tens of KB); larger is not read. */
export const MAX_SESSION_JSON_BYTES = 64 * 1024 * 1024;

export function readJsonMaybeGz(path: string): unknown {
  // A store is data from anyone: report.json -> /dev/zero or a FIFO must not hang or fill memory.
  const small = (p: string) => {
    regularInput(p, 'session file');
    if (statSync(p).size > MAX_SESSION_JSON_BYTES)
      throw new UserError(`${p}: over ${MAX_SESSION_JSON_BYTES} bytes: not a session file`);
    return readFileSync(p);
  };
  if (existsSync(path)) return JSON.parse(small(path).toString('utf8'));
  if (existsSync(`${path}.gz`))
    return JSON.parse(
      gunzipSync(small(`${path}.gz`), { maxOutputLength: MAX_SESSION_JSON_BYTES }).toString('utf8'),
    );
  return undefined;
}

export function storeRoot(root: string): string {
  const r = resolve(root);
  if (!existsSync(r) || !statSync(r).isDirectory())
    throw new UserError(`${root}: no session store there (not a directory)`);
  return r;
}

/** Plan slugs and test names in the store, sorted. */
export function storeNames(root: string): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
    .map((d) => d.name)
    .sort();
}

/** Session directory names of one name, oldest first (the timestamps sort). */
export function sessionIds(root: string, name: string): string[] {
  const dir = join(root, name);
  if (!existsSync(dir)) return [];
  // The directory entries' own types: no stat per session (a store holds thousands), and `latest` and
  // other symlinks are not directories here.
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== LATEST && SESSION_NAME.test(d.name))
    .map((d) => d.name)
    .sort(compareIds);
}

/** `2026-…Z` < `2026-…Z-2` < `2026-…Z-10`. */
export function compareIds(a: string, b: string): number {
  const [sa, na] = splitId(a);
  const [sb, nb] = splitId(b);
  return sa < sb ? -1 : sa > sb ? 1 : na - nb;
}
function splitId(id: string): [string, number] {
  const m = id.match(/^(.*Z)(?:-(\d+))?$/);
  return [m?.[1] ?? id, Number(m?.[2] ?? 1)];
}

export function readSession(root: string, name: string, id: string): SessionSummary {
  const dir = join(root, name, id);
  const base = { name, id, dir };
  // A `faultline test` session keeps results.json at its root (and, since it has one, a findings report
  // too): it stays a test session, summarised per checker as before.
  const results = resultsFile.safeParse(safeRead(join(dir, 'results.json')));
  if (results.success) {
    const r = results.data;
    const word = (v: unknown) => (v === true ? 'valid' : v === false ? 'INVALID' : 'unknown');
    const opsPerSec = r.stats && r.elapsedS ? r.stats.invoked / r.elapsedS : null;
    return {
      ...base,
      kind: 'test',
      startedAt: timestampOf(id),
      verdict: word(r.valid),
      headline: r.results.map((c) => `${c.checker} ${word(c.valid)}`).join(', '),
      rows: r.results.map((c) => ({
        id: c.checker,
        verdict: word(c.valid),
        outcome: c.valid === true ? 'success' : c.valid === false ? 'failure' : 'concern',
        expected: null,
        opsPerSec,
        p99Ms: null,
        anomalies: null,
      })),
    };
  }
  const report = reportFile.safeParse(safeRead(join(dir, 'findings', 'report.json')));
  if (report.success) {
    const r = report.data;
    return {
      ...base,
      kind: 'run',
      startedAt: r.session.startedAt,
      verdict: r.sessionVerdict,
      headline: r.headline,
      // Rows the session left out (`--scenario`, or another shard's units) are not part of its result.
      rows: r.scenarios
        .filter((s) => !isNotSelected({ verdict: s.verdict, reasons: s.reasons ?? [] }))
        .map((s) => ({
          id: s.id,
          verdict: s.verdict,
          outcome:
            s.outcome ??
            (typeof s.expectationMet === 'boolean' ? (s.expectationMet ? 'success' : 'failure') : null),
          expected: s.expected ?? null,
          opsPerSec: s.figures?.opsPerSec ?? null,
          p99Ms: s.figures?.latencyMs.p99 ?? null,
          anomalies: s.counts?.anomalies.total ?? null,
        })),
    };
  }
  return {
    ...base,
    kind: 'run',
    startedAt: timestampOf(id),
    verdict: 'unreadable',
    headline: 'no readable findings/report.json or results.json (still running, or interrupted)',
    rows: [],
  };
}

function safeRead(path: string): unknown {
  try {
    return readJsonMaybeGz(path);
  } catch {
    return undefined;
  }
}

/** `2026-11-30T03-19-09Z` → `2026-11-30T03:19:09Z`. */
export function timestampOf(id: string): string | null {
  const m = id.match(/^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})Z/);
  return m ? `${m[1]}T${m[2]}:${m[3]}:${m[4]}Z` : null;
}

/**
 * A session named on the command line: a directory path, `<name>/<id>`, an id (when the store has one
 * name, or with `name`), or `latest` / `previous`.
 */
export function resolveSession(root: string, ref: string, name?: string): { name: string; id: string } {
  const asPath = resolve(ref);
  if (existsSync(join(asPath, 'findings')) || existsSync(join(asPath, 'results.json'))) {
    const parts = asPath.split('/');
    const id = parts.at(-1)!;
    if (SESSION_NAME.test(id)) return { name: parts.at(-2)!, id };
  }
  const [n, i] = ref.includes('/') ? (ref.split('/') as [string, string]) : [name ?? onlyName(root), ref];
  const ids = sessionIds(root, n);
  if (ids.length === 0) throw new UserError(`${n}: no sessions in ${root}`);
  if (i === 'latest') return { name: n, id: ids.at(-1)! };
  if (i === 'previous') {
    if (ids.length < 2) throw new UserError(`${n}: only one session, nothing to compare with`);
    return { name: n, id: ids.at(-2)! };
  }
  if (!ids.includes(i)) throw new UserError(`${n}/${i}: no such session in ${root}`);
  return { name: n, id: i };
}

function onlyName(root: string): string {
  const names = storeNames(root);
  if (names.length === 1) return names[0]!;
  throw new UserError(
    names.length === 0
      ? `${root}: the store is empty`
      : `the store holds ${names.length} names (${names.join(', ')}): say which with --name`,
  );
}
