import { createWriteStream, type WriteStream } from 'node:fs';
import type { HistoryEvent } from '../history/event.ts';
import type { EventSink } from './sink.ts';

/**
 * Streams events to history.jsonl. Interim sink until the history layer's HistoryWriter is wired in:
 * buffered lines, written in batches; close() flushes and fsyncs.
 */
export class JsonlFileSink implements EventSink {
  private readonly out: WriteStream;
  private buf: string[] = [];
  private failed: Error | undefined;
  constructor(readonly path: string) {
    this.out = createWriteStream(path, { flags: 'wx' });
    this.out.on('error', (err) => {
      this.failed = err;
    });
  }
  append(event: HistoryEvent): void {
    if (this.failed) throw this.failed;
    this.buf.push(JSON.stringify(event));
    if (this.buf.length >= 1024) this.flush();
  }
  private flush(): void {
    if (this.buf.length === 0) return;
    this.out.write(`${this.buf.join('\n')}\n`);
    this.buf = [];
  }
  async close(): Promise<void> {
    this.flush();
    await new Promise<void>((resolve, reject) => {
      this.out.end(() => (this.failed ? reject(this.failed) : resolve()));
    });
  }
}

/** Opens the sink a run writes history.jsonl through. */
export async function openHistorySink(path: string): Promise<EventSink> {
  return new JsonlFileSink(path);
}
