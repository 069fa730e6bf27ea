import type { HistoryEvent } from '../../core/history/event.ts';

/** Where the interpreter streams events. The run writes them to history.jsonl through the history writer. */
export interface EventSink {
  append(event: HistoryEvent): void;
  close(): Promise<void>;
  /** True when the disk is falling behind; the interpreter then awaits `drain()` before dispatching more. */
  readonly needsDrain?: boolean;
  drain?(): Promise<void>;
}

/** Keeps events in memory (tests, small in-process runs). */
export class MemorySink implements EventSink {
  readonly events: HistoryEvent[] = [];
  append(event: HistoryEvent): void {
    this.events.push(event);
  }
  async close(): Promise<void> {}
}
