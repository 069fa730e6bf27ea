/**
 * One check's typed arrays carved out of a single ArrayBuffer. Node counts every ArrayBuffer as external
 * memory and runs a full garbage collection each time that grows by a few tens of MB; over a history of
 * a million transactions (a heap of about 1 GB to mark) each such collection costs one to two seconds.
 * Reserving the check's arrays in one allocation pays for at most one. Regions are handed out once and
 * never reused, so they are zero-filled like `new Int32Array(n)`; when the reservation runs out, plain
 * allocation takes over.
 */
let scopes = 0;
let buffer: ArrayBuffer | null = null;
let used = 0;

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

function carve(bytes: number): number {
  if (!buffer) return -1;
  const offset = (used + 7) & ~7;
  if (offset + bytes > buffer.byteLength) return -1;
  used = offset + bytes;
  return offset;
}

export function i32(n: number): Int32Array {
  const at = carve(4 * n);
  return at < 0 ? new Int32Array(n) : new Int32Array(buffer!, at, n);
}

export function u8(n: number): Uint8Array {
  const at = carve(n);
  return at < 0 ? new Uint8Array(n) : new Uint8Array(buffer!, at, n);
}
