/**
 * One check's typed arrays carved out of a single ArrayBuffer. Node counts every ArrayBuffer as external
 * memory and runs a full garbage collection each time that grows by a few tens of MB; over a history of
 * a million transactions (a heap of about 1 GB to mark) each such collection costs one to two seconds.
 * Reserving the check's arrays in one allocation pays for at most one. Regions are handed out once and
 * never reused, so they are zero-filled like `new Int32Array(n)`; when the reservation runs out, plain
 * allocation takes over.
 *
 * Arrays the check no longer needs can be given back ({@link recycleIntoArena}: the history builder's
 * arrays once the history is sorted) and are carved first, zero-filled on the way out: their pages are
 * already mapped, while each page of the fresh reservation costs a page fault when first written (several
 * µs each on a loaded virtual machine).
 */
let scopes = 0;
let buffer: ArrayBuffer | null = null;
let used = 0;
/** Given-back memory, carved before the reservation: each piece's bytes from `used` on are free. */
let spare: { bytes: Uint8Array; used: number }[] = [];

/** Run `fn` with an arena scope open; the arena (if one was reserved) is released afterwards. */
export function withArena<T>(fn: () => T): T {
  scopes++;
  try {
    return fn();
  } finally {
    scopes--;
    if (scopes === 0) {
      buffer = null;
      used = 0;
      spare = [];
    }
  }
}

/** Reserve the arena once the sizes are known (a no-op outside a scope, or when already reserved). */
export function reserveArena(bytes: number): void {
  if (scopes === 0 || buffer !== null) return;
  try {
    buffer = new ArrayBuffer(Math.ceil(bytes / 8) * 8);
  } catch {
    buffer = null;
  }
  used = 0;
}

/**
 * Give arrays nothing references any more to the open arena (a no-op outside a scope). The caller
 * must hold no other view of them: their memory is handed out again.
 */
export function recycleIntoArena(arrays: readonly ArrayBufferView[]): void {
  if (scopes === 0) return;
  for (const a of arrays)
    if (a.byteLength >= REUSE_MIN_BYTES)
      spare.push({ bytes: new Uint8Array(a.buffer, a.byteOffset, a.byteLength), used: 0 });
}

/** A zero-filled region of given-back memory (the piece with the least room that fits), or null. */
function reuse(bytes: number, align: number): { buffer: ArrayBufferLike; offset: number } | null {
  let best: (typeof spare)[number] | null = null;
  let bestOffset = 0;
  let bestRoom = Number.POSITIVE_INFINITY;
  for (const s of spare) {
    const base = s.bytes.byteOffset;
    const offset = (base + s.used + align - 1) & ~(align - 1);
    const room = base + s.bytes.byteLength - offset;
    if (room >= bytes && room < bestRoom) {
      best = s;
      bestOffset = offset;
      bestRoom = room;
    }
  }
  if (!best) return null;
  best.used = bestOffset + bytes - best.bytes.byteOffset;
  new Uint8Array(best.bytes.buffer, bestOffset, bytes).fill(0);
  return { buffer: best.bytes.buffer, offset: bestOffset };
}

function carve(bytes: number): number {
  if (!buffer) return -1;
  const offset = (used + 7) & ~7;
  if (offset + bytes > buffer.byteLength) return -1;
  used = offset + bytes;
  return offset;
}

/** Requests below this go to the reservation: given-back memory is kept for the large arrays. */
const REUSE_MIN_BYTES = 1 << 16;

export function i32(n: number): Int32Array {
  const r = spare.length && 4 * n >= REUSE_MIN_BYTES ? reuse(4 * n, 4) : null;
  if (r) return new Int32Array(r.buffer, r.offset, n);
  const at = carve(4 * n);
  return at < 0 ? new Int32Array(n) : new Int32Array(buffer!, at, n);
}

export function u8(n: number): Uint8Array {
  const r = spare.length && n >= REUSE_MIN_BYTES ? reuse(n, 1) : null;
  if (r) return new Uint8Array(r.buffer, r.offset, n);
  const at = carve(n);
  return at < 0 ? new Uint8Array(n) : new Uint8Array(buffer!, at, n);
}
