/**
 * The one seeded random source behind every choice a generator makes (op values, mix choices, stagger
 * gaps, fault targets). sfc32: small, fast, good enough for scheduling, and reproducible across platforms.
 *
 * `fork(label)` derives an independent stream from the *seed* and a label, not from the parent's current
 * state: the client and the nemesis streams then do not depend on how their draws interleave in time,
 * so the same seed gives the same op sequence and the same fault schedule even though completions
 * arrive in a different order on every run.
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(readonly seed: number) {
    const [a, b, c, d] = seedWords(String(seed));
    this.a = a;
    this.b = b;
    this.c = c;
    this.d = d;
    this.path = String(seed);
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  /** A fresh stream determined by this stream's seed path and the label. */
  fork(label: string): Rng {
    const child = Object.create(Rng.prototype) as Rng;
    const path = `${this.path}/${label}`;
    const [a, b, c, d] = seedWords(path);
    Object.assign(child, { seed: this.seed, a, b, c, d, path });
    for (let i = 0; i < 12; i++) child.nextUint32();
    return child;
  }

  private path = '';

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi]. */
  between(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick: empty list');
    return items[this.int(items.length)] as T;
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = out[i] as T;
      out[i] = out[j] as T;
      out[j] = tmp;
    }
    return out;
  }
}

/** cyrb128: turns a string into four 32-bit seed words. */
function seedWords(str: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < str.length; i++) {
    const k = str.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}
