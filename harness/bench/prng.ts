// A small seeded PRNG (splitmix32 seeding + xoshiro128**), fast enough to
// generate a 64 MiB benchmark stream, and the same numbers on every machine.

/** Deterministic pseudo-random numbers from a 32-bit seed. */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = (): number => {
      // splitmix32: spreads a small seed over the whole state.
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next() | 1;
  }

  /** A uniform unsigned 32-bit integer (xoshiro128**). */
  u32(): number {
    const r = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return r;
  }

  /** A uniform integer in [0, n) for 0 < n ≤ 2^32 (the tiny modulo bias is irrelevant here). */
  below(n: number): number {
    return this.u32() % n;
  }

  /** true with probability p. */
  chance(p: number): boolean {
    return this.u32() < p * 0x1_0000_0000;
  }

  /** A uniform value of exactly `bits` random bits (0..64) as a bigint. */
  bits(bits: number): bigint {
    if (bits <= 0) return 0n;
    const v = (BigInt(this.u32()) << 32n) | BigInt(this.u32());
    return bits >= 64 ? v : v & ((1n << BigInt(bits)) - 1n);
  }

  /** A value of a random width in 0..maxBits, so small and large values both appear. */
  wide(maxBits: number): bigint {
    return this.bits(this.below(maxBits + 1));
  }

  /** One element of `items`. */
  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)]!;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
