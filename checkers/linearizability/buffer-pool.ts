/**
 * Int32Arrays handed back by searches that no longer need them, for the next search to reuse.
 *
 * The search's configuration cache is its largest allocation (a few MB on a hard 80-op history) and
 * its backing store lives outside the JavaScript heap: a dropped one is freed only by a major
 * collection, which the small heap of a checker rarely needs. Checking one history after another (the
 * 109 Porcupine files, a CLI checking many files) then accumulated tens of MB of dead caches.
 * Handing them back here lets the next search take them instead of allocating.
 *
 * Released arrays are held weakly: the pool never keeps memory alive that the garbage collector
 * wants back, so it holds no more than dropping them would, and is empty after a major collection
 * if nothing took them. An array taken from the pool belongs to its taker until given back; a search
 * never gives back an array it still reads.
 */
export class Int32Pool {
  /** Released arrays kept per length at most; older ones are left to the garbage collector. */
  static readonly PER_LENGTH = 32;
  private readonly free = new Map<number, WeakRef<Int32Array>[]>();

  /**
   * An array of exactly `length` ints: a released one when one is still alive, else a new one. When
   * `zero`, it is all zeros (new arrays always are); otherwise a reused one holds stale values.
   */
  take(length: number, zero: boolean): Int32Array {
    const list = this.free.get(length);
    if (list !== undefined) {
      for (;;) {
        const ref = list.pop();
        if (ref === undefined) break;
        const a = ref.deref();
        if (a !== undefined) {
          if (zero) a.fill(0);
          return a;
        }
      }
    }
    return new Int32Array(length);
  }

  /** Hand `a` back; the caller must not read or write it afterwards. */
  give(a: Int32Array): void {
    if (a.length === 0) return;
    let list = this.free.get(a.length);
    if (list === undefined) {
      list = [];
      this.free.set(a.length, list);
    }
    if (list.length >= Int32Pool.PER_LENGTH) list.shift();
    list.push(new WeakRef(a));
  }

  /** Drop every held array (tests: start from an empty pool). */
  clear(): void {
    this.free.clear();
  }

  /** Arrays currently held (alive or not yet collected), for tests. */
  get size(): number {
    let n = 0;
    for (const list of this.free.values()) for (const ref of list) if (ref.deref() !== undefined) n++;
    return n;
  }
}

/** The pool the searches of this thread share (each worker thread has its own). */
export const searchBuffers = new Int32Pool();
