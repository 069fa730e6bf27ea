import { createReadStream, readdirSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { createGzip } from 'node:zlib';
import { openAtomic } from '../../core/util/atomic-write.ts';
import { sessionIds, storeNames, timestampOf } from './store.ts';

/**
 * Keeping a store small: `prune` removes old sessions (never the newest of a name, which `latest`
 * points at), `compress` gzips large artifacts in place (`history.jsonl` → `history.jsonl.gz`). Both
 * take `dryRun` and return what they did (or would do).
 */

export interface PrunePlan {
  remove: { name: string; id: string; dir: string }[];
  keep: number;
}

export function planPrune(
  root: string,
  o: { keep?: number; olderThanMs?: number; name?: string; now?: Date },
): PrunePlan {
  const now = (o.now ?? new Date()).getTime();
  const remove: PrunePlan['remove'] = [];
  let keep = 0;
  for (const name of o.name ? [o.name] : storeNames(root)) {
    const ids = sessionIds(root, name);
    ids.forEach((id, i) => {
      const newest = i === ids.length - 1;
      const beyondKeep = o.keep !== undefined && i < ids.length - o.keep;
      const at = Date.parse(timestampOf(id) ?? '');
      const tooOld = o.olderThanMs !== undefined && Number.isFinite(at) && now - at > o.olderThanMs;
      if (!newest && (beyondKeep || tooOld)) remove.push({ name, id, dir: join(root, name, id) });
      else keep++;
    });
  }
  return { remove, keep };
}

export async function prune(plan: PrunePlan): Promise<void> {
  for (const s of plan.remove) await rm(s.dir, { recursive: true, force: true });
}

/** Files never compressed: the reports every reader opens directly, and what is already small. */
const KEEP_PLAIN = /(^|\/)(report\.(json|md|schema\.json)|junit\.xml|session-log\.md|[^/]+\.md)$/;

export interface CompressItem {
  path: string;
  bytes: number;
}

/** Files of at least `minBytes` under the sessions given (all by default), not yet compressed. */
export function compressible(
  root: string,
  o: { minBytes: number; name?: string; includeLatest?: boolean },
): CompressItem[] {
  const out: CompressItem[] = [];
  for (const name of o.name ? [o.name] : storeNames(root)) {
    for (const id of sessionIds(root, name)) {
      const dir = join(root, name, id);
      for (const file of walk(dir)) {
        const rel = relative(dir, file);
        if (file.endsWith('.gz') || KEEP_PLAIN.test(rel)) continue;
        const bytes = statSync(file).size;
        if (bytes >= o.minBytes) out.push({ path: file, bytes });
      }
    }
  }
  return out;
}

function* walk(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* walk(p);
    else if (e.isFile()) yield p;
  }
}

/** gzip each file to `<file>.gz` (written aside, then renamed), then remove the original. */
export async function compress(items: readonly CompressItem[]): Promise<{ before: number; after: number }> {
  let before = 0;
  let after = 0;
  for (const { path, bytes } of items) {
    // Through the one atomic writer: a fresh O_EXCL|O_NOFOLLOW temporary file, renamed only over a
    // regular file inside the session's directory (a planted `history.jsonl.gz` symlink is refused).
    const out = await openAtomic(`${path}.gz`, { root: dirname(path) });
    try {
      for await (const chunk of createReadStream(path).pipe(createGzip({ level: 6 })))
        await out.write(chunk as Buffer);
      const st = statSync(path);
      await out.handle.utimes(st.atime, st.mtime);
    } catch (err) {
      await out.abort();
      throw err;
    }
    await out.commit();
    await rm(path);
    before += bytes;
    after += statSync(`${path}.gz`).size;
  }
  return { before, after };
}

/** Bytes under a directory (files only). */
export function sizeOf(dir: string): number {
  let n = 0;
  for (const f of walk(dir)) n += statSync(f).size;
  return n;
}
