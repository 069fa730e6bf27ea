import { HistoryWriter, type HistoryWriterOptions } from '../../core/history/writer.ts';
import type { EventSink } from './sink.ts';

/**
 * Opens the sink a run streams history.jsonl through: the history layer's HistoryWriter (append-only,
 * validated, batched fsync), so a run killed mid-way keeps every batch already synced.
 */
export async function openHistorySink(path: string, opts: HistoryWriterOptions = {}): Promise<EventSink> {
  const w = await HistoryWriter.open(path, opts);
  return {
    append: (ev) => w.append(ev),
    close: () => w.close(),
    get needsDrain() {
      return w.needsDrain;
    },
    drain: () => w.drain(),
  };
}
