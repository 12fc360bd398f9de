// A small seeded PRNG (mulberry32) so that a seed alone fixes a workload, on every platform.

/** Deterministic pseudo-random numbers from a 32-bit seed. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** A uniform 32-bit unsigned integer. */
  u32(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** A uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor((this.u32() / 0x1_0000_0000) * (hi - lo + 1));
  }
  /** True with probability p. */
  chance(p: number): boolean {
    return this.u32() / 0x1_0000_0000 < p;
  }
  /** One element of a non-empty array. */
  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new RangeError('pick from an empty array');
    return xs[this.int(0, xs.length - 1)] as T;
  }
}
