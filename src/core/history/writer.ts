import { writeSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { HistoryEvent } from './event.ts';
import { eventLine } from './jsonl.ts';
import { checkEvent, describe } from './validate.ts';

/**
 * The history recorder's file: append-only JSONL, written and fsynced in batches.
 *
 * Two guarantees, two mechanisms:
 * - **Process crash (kill -9): nothing appended is lost.** With `writeThrough` (the default) `append`
 *   hands the event's line to the kernel with write(2) before it returns, so an op's completion is in
 *   the file (the page cache) before the recorder passes it back to the generator or the client; the
 *   kernel keeps it whatever happens to the process. A kill can at worst interrupt one write(2) of
 *   one line, leaving a torn last line (the reader detects it and `--allow-torn-tail` drops it).
 * - **Machine crash (power loss): at most the last batch is lost.** fdatasync stays batched: it runs
 *   when `syncEvery` events are pending or `syncIntervalMs` after the first, whichever comes first, one
 *   at a time; `durableCount` tells how many events are safe.
 * Without `writeThrough` (conversions, which can start over) lines are buffered and written with each
 * batch, which is cheaper per event.
 *
 * Every event is checked with the same rules as the reader (and `index` must count 0, 1, 2, …), so a
 * recorder bug fails at the append that caused it, not later in a checker.
 */
export interface HistoryWriterOptions {
  /** Write and fsync after this many pending events (default 1000). */
  syncEvery?: number;
  /** …or this many milliseconds after the first pending event (default 100). */
  syncIntervalMs?: number;
  /** 'create' (default) refuses to overwrite an existing file; 'truncate' replaces it. */
  mode?: 'create' | 'truncate';
  /** Skip the per-event fsync entirely (tests and conversions that do not need durability). */
  fsync?: boolean;
  /** Called after each batch is durable, with the number of events durable so far. */
  onSynced?: (durableCount: number) => void;
  /** Backlog (events not yet on disk) at which {@link HistoryWriter.needsDrain} turns true (default 16 × syncEvery). */
  maxBacklog?: number;
  /**
   * Write each event to the kernel as it is appended (default true): a kill -9 of the process then
   * loses nothing appended. False buffers lines until the next batch (for conversions).
   */
  writeThrough?: boolean;
}

export class HistoryWriter {
  private parts: string[] = [];
  private pending = 0;
  private next = 0;
  private durable = 0;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private queued = false;
  private failure: Error | undefined;
  private closed = false;
  private readonly syncEvery: number;
  private readonly syncIntervalMs: number;
  private readonly maxBacklog: number;
  private inFlight = 0;
  private batchDone: (() => void)[] = [];
  private readonly writeThrough: boolean;

  private constructor(
    readonly path: string,
    private readonly fh: FileHandle,
    private readonly opts: HistoryWriterOptions,
  ) {
    this.syncEvery = Math.max(1, opts.syncEvery ?? 1000);
    this.syncIntervalMs = Math.max(0, opts.syncIntervalMs ?? 100);
    this.maxBacklog = Math.max(this.syncEvery, opts.maxBacklog ?? 16 * this.syncEvery);
    this.writeThrough = opts.writeThrough ?? true;
  }

  /** Writes through a handle someone else opened (and will close), e.g. an atomic output file's. */
  static onHandle(path: string, fh: FileHandle, opts: HistoryWriterOptions = {}): HistoryWriter {
    return new HistoryWriter(path, fh, opts);
  }

  static async open(path: string, opts: HistoryWriterOptions = {}): Promise<HistoryWriter> {
    const fh = await open(path, opts.mode === 'truncate' ? 'w' : 'wx');
    return new HistoryWriter(path, fh, opts);
  }

  /** The index the next appended event must carry. */
  get nextIndex(): number {
    return this.next;
  }

  /** Events known to be on disk (written and fsynced; just written when fsync is off). */
  get durableCount(): number {
    return this.durable;
  }

  /** Events appended but not yet durable (pending plus the batch being written). */
  get backlog(): number {
    return this.pending + this.inFlight;
  }

  /**
   * True when the disk is falling behind the producer. A producer that can outrun the disk (a bench, a
   * conversion) should then `await drain()`, so memory and the crash-loss window stay bounded.
   */
  get needsDrain(): boolean {
    return this.backlog >= this.maxBacklog;
  }

  /** Waits until the backlog is below the limit again (batches keep flowing while the caller waits). */
  async drain(): Promise<void> {
    this.schedule();
    while (this.needsDrain && !this.failure) {
      await new Promise<void>((resolve) => this.batchDone.push(resolve));
    }
    if (this.failure) throw this.failure;
  }

  /** Appends a complete event; its `index` must equal {@link nextIndex}. */
  append(ev: HistoryEvent): void {
    if (this.failure) throw this.failure;
    if (this.closed) throw new Error(`history writer for ${this.path} is closed`);
    const problem = checkEvent(ev);
    if (problem) throw new Error(`history event ${describe(ev)}: ${problem.field}: ${problem.reason}`);
    if (ev.index !== this.next) throw new Error(`history event index ${ev.index}, expected ${this.next}`);
    if (this.writeThrough) this.writeNow(eventLine(ev));
    else this.parts.push(eventLine(ev));
    this.next++;
    this.pending++;
    if (this.pending >= this.syncEvery) this.schedule();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.schedule(), this.syncIntervalMs);
      this.timer.unref();
    }
  }

  /** Appends an event without an index, assigning the next one; returns the stored event. */
  record(ev: Omit<HistoryEvent, 'index'>): HistoryEvent {
    const full = { index: this.next, ...ev } as HistoryEvent;
    this.append(full);
    return full;
  }

  /** Writes and fsyncs everything appended so far. */
  async flush(): Promise<void> {
    this.schedule();
    await this.chain;
    if (this.failure) throw this.failure;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
    } finally {
      this.closed = true;
      if (this.timer) clearTimeout(this.timer);
      await this.fh.close();
    }
  }

  /** write(2) the whole line now (a regular file may take it in several writes). */
  private writeNow(line: string): void {
    try {
      // The string form saves a Buffer per event; a short write (rare on a regular file) finishes from bytes.
      const done = writeSync(this.fh.fd, line);
      if (done < Buffer.byteLength(line)) {
        const buf = Buffer.from(line);
        for (let off = done; off < buf.length; ) off += writeSync(this.fh.fd, buf, off, buf.length - off);
      }
    } catch (err) {
      this.failure = new Error(`writing history ${this.path}: ${(err as Error).message}`, { cause: err });
      throw this.failure;
    }
  }

  private schedule(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.queued) return;
    this.queued = true;
    this.chain = this.chain.then(() => this.writeBatch());
  }

  private async writeBatch(): Promise<void> {
    this.queued = false;
    if (this.pending === 0 || this.failure) return;
    const data = this.parts.join('');
    const n = this.pending;
    this.parts = [];
    this.pending = 0;
    this.inFlight = n;
    try {
      if (data.length > 0) await this.fh.write(data);
      if (this.opts.fsync !== false) await this.fh.datasync();
      this.durable += n;
      this.opts.onSynced?.(this.durable);
    } catch (err) {
      this.failure = new Error(`writing history ${this.path}: ${(err as Error).message}`, { cause: err });
    } finally {
      this.inFlight = 0;
      const waiters = this.batchDone;
      this.batchDone = [];
      for (const w of waiters) w();
      // Keep the disk busy: whatever accumulated during this batch goes next.
      if (this.pending >= this.syncEvery) this.schedule();
    }
  }
}
