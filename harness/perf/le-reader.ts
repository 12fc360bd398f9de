// Bounded little-endian reads of a perf.data held in memory: every read checks that its bytes lie
// inside the file first, so a truncated or lying file is a PerfDataError naming the field, never
// a RangeError (STYLE.md §4: check the length first).
import { PerfDataError } from './perf-data-error.js';

/** Reads little-endian integers and strings of `bytes`; a read past the end throws PerfDataError. */
export class LeReader {
  private readonly view: DataView;

  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get length(): number {
    return this.bytes.length;
  }

  /** Throws unless `n` bytes at `at` lie inside the file; `what` names them in the message. */
  need(at: number, n: number, what: string): void {
    if (!(at >= 0 && n >= 0 && at + n <= this.bytes.length)) {
      throw new PerfDataError(at, `${what} (${n} bytes) lies past the end of the file (${this.bytes.length} bytes)`);
    }
  }

  u16(at: number, what: string): number {
    this.need(at, 2, what);
    return this.view.getUint16(at, true);
  }

  u32(at: number, what: string): number {
    this.need(at, 4, what);
    return this.view.getUint32(at, true);
  }

  i32(at: number, what: string): number {
    this.need(at, 4, what);
    return this.view.getInt32(at, true);
  }

  u64(at: number, what: string): bigint {
    this.need(at, 8, what);
    return this.view.getBigUint64(at, true);
  }

  /** The NUL-terminated string at `at`, read up to `end` at most (latin1: perf writes bytes). */
  cstring(at: number, end: number, what: string): string {
    this.need(at, end - at, what);
    const nul = this.bytes.subarray(at, end).indexOf(0);
    return Buffer.from(this.bytes.subarray(at, nul < 0 ? end : at + nul)).toString('latin1');
  }
}
