import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import ava, { type ExecutionContext } from 'ava';
import { ednHistoryValues } from '../../src/core/history/edn.ts';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import { eventToEdn } from '../../src/core/history/jepsen.ts';
import { detectFormat, loadHistory, readEvents } from '../../src/core/history/read.ts';
import { HistoryWriter } from '../../src/core/history/writer.ts';
import { conformance } from '../helpers/conformance.ts';
import { fixturesDir, fixturesPresent } from '../helpers/fixtures.ts';

/**
 * Every history in the shared fixtures: read it, write JSONL, read that back, write Jepsen EDN, read that
 * back; each step must give the same events. For EDN sources, the EDN written at the end must also be
 * the same EDN data as the original file (op map by op map, in the lossless reading).
 */
const HISTORY_DIRS = ['elle/histories', 'elle/elle-histories', 'porcupine/jepsen', 'porcupine/kv'];

const test = conformance('history round trips of the reference corpora');

function historyFiles(): string[] {
  const out: string[] = [];
  if (!fixturesPresent) return out;
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(edn|json|log|txt)$/.test(name)) out.push(p);
    }
  };
  for (const d of HISTORY_DIRS) walk(join(fixturesDir, d));
  return out;
}

const files = historyFiles();
const scratch = mkdtempSync(join(tmpdir(), 'faultline-roundtrip-'));
ava.after.always(() => rmSync(scratch, { recursive: true, force: true }));

test('the fixture set is the one we expect', (t) => {
  // 21 Elle/elle-cli histories + 103 etcd logs + 6 kv files.
  t.is(files.length, 130);
});

/** Key-order-independent JSON text: a fast equality for large histories (ava's deepEqual is slow there). */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

function same(t: ExecutionContext, actual: unknown, expected: unknown, message: string): void {
  if (canonical(actual) === canonical(expected)) t.pass(message);
  else t.deepEqual(actual, expected, message); // slow, but shows the difference
}

async function writeJsonl(events: HistoryEvent[], path: string): Promise<void> {
  const w = await HistoryWriter.open(path, { mode: 'truncate', fsync: false, syncEvery: 10_000 });
  for (const ev of events) w.append(ev);
  await w.close();
}

for (const file of files) {
  const rel = relative(fixturesDir, file);
  test(`round trip: ${rel}`, async (t) => {
    const format = await detectFormat(file);
    const original = await loadHistory(file);
    if (!rel.endsWith('etcd_095.log')) t.true(original.length > 0, 'history has events');

    const base = join(scratch, rel.replaceAll('/', '_'));
    await writeJsonl(original, `${base}.jsonl`);
    const viaJsonl: HistoryEvent[] = [];
    for await (const ev of readEvents(`${base}.jsonl`)) viaJsonl.push(ev);
    same(t, viaJsonl, original, 'JSONL round trip');

    const ednText = viaJsonl.map((ev) => `${eventToEdn(ev)}\n`).join('');
    writeFileSync(`${base}.edn`, ednText);
    const viaEdn = await loadHistory(`${base}.edn`, {
      format: format === 'porcupine-kv' ? 'porcupine-kv' : 'edn',
    });
    same(t, viaEdn, original, 'EDN round trip');

    if (format === 'edn') {
      const before = [...ednHistoryValues(readFileSync(file, 'utf8'))].map((x) => x.value);
      const after = [...ednHistoryValues(ednText)].map((x) => x.value);
      same(t, after, before, 'EDN data identical to the source file');
    }
  });
}
