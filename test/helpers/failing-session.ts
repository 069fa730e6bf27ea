import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeSessionReports } from '../../src/app/report/write-all.ts';
import { drawnBy } from '../../src/app/run/run-evidence.ts';
import { recordSessionIndex } from '../../src/app/store/index-file.ts';
import { runChecks } from '../../src/app/test/checks.ts';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { sampleSession } from '../report/session-record.ts';
import { kvHistory } from './kv-history.ts';

/** The failing session's history: key "3" alone cannot be linearized. */
export const badKvHistory = (): HistoryEvent[] => kvHistory('3');

/**
 * A finished session with real pages, written into `sessionDir` without a cluster: the checkers a run
 * uses (per-key linearizability, the timeline) check a recorded history with one non-linearizable key
 * and draw their pages into S2's run directory; S2's oracle then points at those pages as a run's
 * would, and every report (report.html, report.json, junit.xml, …) is written by the run's own writers.
 * Returns where the anomaly is drawn. Only artifacts that exist are listed, so every link resolves.
 */
export async function writeFailingSession(
  sessionDir: string,
): Promise<{ key: string; op: number; page: string }> {
  const runDir = join('artifacts', 'S2', '01-run');
  const out = join(sessionDir, runDir);
  const history = pairEvents(badKvHistory());
  const { results } = await runChecks(
    history,
    [
      { name: 'linearizable', options: { model: 'kv' }, independent: true },
      { name: 'timeline', options: {} },
    ],
    null,
    out,
  );
  const lin = results.find((r) => r.checker === 'linearizable');
  if (lin?.valid !== false)
    throw new Error(`the history written to fail should not linearize: ${lin?.evidence}`);
  const drawn = drawnBy(lin, out);
  if (!drawn.focus?.page) throw new Error('the checker drew no page for the failing key');
  writeFileSync(join(out, 'history.jsonl'), `${history.events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  const record = await sampleSession(sessionDir);
  for (const ev of record.evidence) {
    ev.artifacts = [];
    if (ev.scenario !== 'S2') continue;
    ev.runDir = runDir;
    ev.oracles = ev.oracles.map((o) => (o.valid === false ? { ...o, ...drawn } : o));
    ev.artifacts = [
      { label: 'history', path: join(runDir, 'history.jsonl') },
      { label: 'timeline.html', path: join(runDir, 'timeline.html') },
    ];
  }
  await writeSessionReports(record);
  const unindexed = recordSessionIndex(sessionDir);
  if (unindexed) throw new Error(unindexed);
  return { key: drawn.focus.key ?? '', op: drawn.focus.op, page: join(runDir, drawn.focus.page) };
}
