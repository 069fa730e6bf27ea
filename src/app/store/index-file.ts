import { statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { appendFileInsideSync, writeFileAtomicSync } from '../../core/util/atomic-write.ts';
import { errorMessage } from '../../core/util/errors.ts';
import { readJsonLines } from '../../core/util/json-file.ts';
import { readSession, type SessionSummary, sessionIds } from './store.ts';

/**
 * The store's summary index: `<root>/<name>/.index.jsonl`, one line per finished session with the
 * summary `faultline sessions` and `serve` show, and the size and mtime of the file it was taken from.
 * `faultline run` and `faultline test` append their session's line when its reports are written, so a
 * reader learns 30 sessions' verdicts and figures from one small file instead of opening and parsing 30
 * report.json files (each tens of KB). The index is only a cache: a line is used only while its source
 * file still has the recorded size and mtime, and a session without a usable line is read from its
 * reports as before (sessions written before the index existed, a report rewritten since, a line lost).
 * `prune` drops the lines of the sessions it removes; `faultline sessions index` rebuilds the file.
 */
export const INDEX_FILE = '.index.jsonl';
const INDEX_VERSION = 1;

const rowSchema = z.object({
  id: z.string(),
  verdict: z.string(),
  outcome: z.enum(['success', 'failure', 'concern']).nullable(),
  expected: z.array(z.string()).nullable(),
  opsPerSec: z.number().nullable(),
  p99Ms: z.number().nullable(),
  anomalies: z.number().nullable(),
});
const entrySchema = z.object({
  v: z.literal(INDEX_VERSION),
  id: z.string(),
  source: z.enum(['findings/report.json', 'results.json']),
  size: z.number(),
  mtimeMs: z.number(),
  kind: z.enum(['run', 'test']),
  startedAt: z.string().nullable(),
  verdict: z.string(),
  headline: z.string(),
  rows: z.array(rowSchema),
});
export type IndexEntry = z.infer<typeof entrySchema>;

/** The file a summary was read from, as the index records it. */
function sourceOf(s: SessionSummary): IndexEntry['source'] {
  return s.kind === 'run' ? 'findings/report.json' : 'results.json';
}

function entryOf(s: SessionSummary): IndexEntry | null {
  if (s.verdict === 'unreadable') return null;
  const source = sourceOf(s);
  const st = statSync(join(s.dir, source), { throwIfNoEntry: false });
  if (!st) return null; // compressed: read from its .gz like any session without a line
  return {
    v: INDEX_VERSION,
    id: s.id,
    source,
    size: st.size,
    mtimeMs: st.mtimeMs,
    kind: s.kind,
    startedAt: s.startedAt,
    verdict: s.verdict,
    headline: s.headline,
    rows: s.rows,
  };
}

/**
 * Appends a finished session's line to its name's index. Returns why it could not (the session itself
 * is complete either way: the index is a cache), or null.
 */
export function recordSessionIndex(sessionDir: string): string | null {
  try {
    const nameDir = dirname(sessionDir);
    const entry = entryOf(readSession(dirname(nameDir), basename(nameDir), basename(sessionDir)));
    if (!entry) return `${sessionDir}: no readable report to index`;
    appendFileInsideSync(join(nameDir, INDEX_FILE), `${JSON.stringify(entry)}\n`, nameDir);
    return null;
  } catch (err) {
    return `${sessionDir}: the session index could not be written (${errorMessage(err)})`;
  }
}

/** The index lines of a name by session id (the last line of an id wins); unreadable lines are skipped. */
export function readIndex(root: string, name: string): Map<string, IndexEntry> {
  const out = new Map<string, IndexEntry>();
  // A line cut short by a crash is skipped: that session is read from its reports.
  for (const { value } of readJsonLines(join(root, name, INDEX_FILE)) ?? []) {
    const e = entrySchema.safeParse(value);
    if (e.success) out.set(e.data.id, e.data);
  }
  return out;
}

/** The summary an index line holds, when its source file is still the one it was taken from. */
export function summaryFromIndex(root: string, name: string, e: IndexEntry): SessionSummary | null {
  const dir = join(root, name, e.id);
  const st = statSync(join(dir, e.source), { throwIfNoEntry: false });
  if (!st || st.size !== e.size || st.mtimeMs !== e.mtimeMs) return null;
  return {
    name,
    id: e.id,
    dir,
    kind: e.kind,
    startedAt: e.startedAt,
    verdict: e.verdict,
    headline: e.headline,
    rows: e.rows,
  };
}

/**
 * Rewrites a name's index from its sessions: every current session's line (taken from its reports when
 * `rebuild`, else kept from the index when still valid), none for removed sessions. Atomic: a reader
 * sees the old file or the new one. Returns the number of lines written.
 */
export function rewriteIndex(root: string, name: string, o: { rebuild?: boolean } = {}): number {
  const old = o.rebuild ? new Map<string, IndexEntry>() : readIndex(root, name);
  const lines: string[] = [];
  for (const id of sessionIds(root, name)) {
    const kept = old.get(id);
    const entry = kept && summaryFromIndex(root, name, kept) ? kept : entryOf(readSession(root, name, id));
    if (entry) lines.push(JSON.stringify(entry));
  }
  const path = join(root, name, INDEX_FILE);
  writeFileAtomicSync(path, lines.length ? `${lines.join('\n')}\n` : '', { root });
  return lines.length;
}

/**
 * Session summaries of a store for a long-lived reader (`serve`): each session is summarised once (a
 * finished session does not change), from the name's index when its line is valid, else from its
 * reports; a session not readable yet (still running) is tried again next time. The index file itself
 * is read again only when it changed.
 */
export class StoreIndex {
  private readonly cache = new Map<string, SessionSummary>();
  private readonly files = new Map<string, { stamp: string; entries: Map<string, IndexEntry> }>();
  constructor(readonly root: string) {}

  /** The sessions of a name, oldest first; only the last `last` when given (only those are read). */
  sessions(name: string, last?: number): SessionSummary[] {
    const ids = sessionIds(this.root, name);
    return this.summaries(name, last === undefined ? ids : ids.slice(-last));
  }

  /** The named sessions' summaries, in the order given. */
  summaries(name: string, wanted: readonly string[]): SessionSummary[] {
    const index = wanted.some((id) => !this.cache.has(`${name}/${id}`)) ? this.indexOf(name) : null;
    return wanted.map((id) => {
      const key = `${name}/${id}`;
      let s = this.cache.get(key);
      if (!s) {
        const e = index?.get(id);
        s = (e && summaryFromIndex(this.root, name, e)) || readSession(this.root, name, id);
        if (s.verdict !== 'unreadable') this.cache.set(key, s);
      }
      return s;
    });
  }

  private indexOf(name: string): Map<string, IndexEntry> {
    const st = statSync(join(this.root, name, INDEX_FILE), { throwIfNoEntry: false });
    const stamp = st ? `${st.size}:${st.mtimeMs}` : '';
    const known = this.files.get(name);
    if (known?.stamp === stamp) return known.entries;
    const entries = st ? readIndex(this.root, name) : new Map<string, IndexEntry>();
    this.files.set(name, { stamp, entries });
    return entries;
  }
}
