// A growable little-endian byte buffer: perf.data is written in the byte order of the machine that
// recorded it, and perf reads a little-endian file on x86 as is (tools/perf/util/header.c checks
// the magic to tell the order).

/** Appends little-endian integers, strings and padding; `bytes()` is what was written. */
export class LeWriter {
  private buf = new Uint8Array(256);
  private view = new DataView(this.buf.buffer);
  private len = 0;

  get length(): number {
    return this.len;
  }

  private room(n: number): number {
    if (this.len + n > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
      next.set(this.buf.subarray(0, this.len));
      this.buf = next;
      this.view = new DataView(next.buffer);
    }
    const at = this.len;
    this.len += n;
    return at;
  }

  u16(v: number): this {
    const at = this.room(2);
    this.view.setUint16(at, v, true);
    return this;
  }

  u32(v: number): this {
    const at = this.room(4);
    this.view.setUint32(at, v >>> 0, true);
    return this;
  }

  /** A signed 32-bit value (pid -1, cpu -1). */
  i32(v: number): this {
    const at = this.room(4);
    this.view.setInt32(at, v, true);
    return this;
  }

  u64(v: bigint): this {
    const at = this.room(8);
    this.view.setBigUint64(at, BigInt.asUintN(64, v), true);
    return this;
  }

  raw(b: Uint8Array): this {
    const at = this.room(b.length); // before reading this.buf: room() may replace it
    this.buf.set(b, at);
    return this;
  }

  /** `s` as ASCII with a NUL, then zeros up to a multiple of `align` bytes. */
  cstring(s: string, align: number): this {
    const b = Buffer.from(`${s}\0`, 'latin1');
    this.raw(b);
    return this.zeros(padTo(b.length, align) - b.length);
  }

  zeros(n: number): this {
    this.room(n); // a fresh region of a grown buffer is already zero, and `room` never reuses bytes
    return this;
  }

  /** Overwrites the u16 at `at` (a record's size, known once its body is written). */
  patchU16(at: number, v: number): void {
    this.view.setUint16(at, v, true);
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

/** `n` rounded up to a multiple of `align`. */
export function padTo(n: number, align: number): number {
  return Math.ceil(n / align) * align;
}
