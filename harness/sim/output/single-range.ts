// Single-range output (docs/sdm/output.md §3): one circular physical range,
// base & ~mask, offset & mask; no interrupt, no STOP, no "full". With a guard (output-guard.ts)
// the range loaded at enable and every write are checked against the memory the driver owns.
import { PtError } from '../../../driver/base/errors.js';
import { span } from '../memory-oracle.js';
import type { MsrFile } from '../msr-file.js';
import type { OutputGuard, Reachable } from './output-guard.js';
import type { SyncPhysMemory } from './sync-phys.js';

/** Which §3.2 operational error fired ('4-no-memory', 'unowned': model choices, not the SDM's). */
export type SingleRangeError = '1-mask-not-contiguous' | '2-base-mask-overlap' | '3-offset-out-of-range' | '4-no-memory' | 'unowned';

const MASK32 = 0xffff_ffffn;

/** The single-range output engine: internal pointers loaded at TraceEn 0→1, written back at 1→0. */
export class SingleRangeOutput {
  private base = 0n;
  private mask = 0x7fn;
  private offset = 0n;
  private active = false;
  /** Bytes written to memory since this engine was created. */
  written = 0;
  /** The §3.2 error that stopped it, if any. */
  error: SingleRangeError | undefined;

  constructor(private readonly file: MsrFile, private readonly phys: SyncPhysMemory, private readonly guard?: OutputGuard) {}

  /** Loads the pointers and checks §3.2 errors 1–3 at enable (the model's choice of timing). */
  enable(m: { readonly outputBase: bigint; readonly maskPtrs: bigint }): void {
    this.base = m.outputBase;
    this.mask = (m.maskPtrs & MASK32) | 0x7fn;
    this.offset = m.maskPtrs >> 32n;
    this.error = undefined;
    if (((this.mask + 1n) & this.mask) !== 0n) this.error = '1-mask-not-contiguous';
    else if ((this.base & this.mask) !== 0n) this.error = '2-base-mask-overlap';
    else if (this.offset > this.mask) this.error = '3-offset-out-of-range';
    else if (this.guard && !this.guard.owns(this.start, this.size)) {
      this.guard.corrupt('output-base', this.start, this.size, `TraceEn 0→1 loaded the single-range output ${span(this.start, this.size)} (OUTPUT_BASE 0x${this.base.toString(16)}), which the driver does not own`);
      this.error = 'unowned';
    }
    this.active = this.error === undefined;
    if (this.error) this.file.operationalError();
  }

  /** The first byte of the range (base & ~mask) and its size (mask + 1). */
  private get start(): bigint { return this.base & ~this.mask; }
  private get size(): number { return Number(this.mask + 1n); }

  /** What PT may still write while TraceEn=1: the whole range. */
  reachable(): Reachable[] {
    return [{ base: this.start, size: this.size, what: 'single-range output' }];
  }

  /** The exact pointers at TraceEn 1→0. */
  disable(): { outputBase: bigint; maskPtrs: bigint } {
    this.active = false;
    return { outputBase: this.base, maskPtrs: (this.offset << 32n) | this.mask };
  }

  /** Writes trace bytes at (base & ~mask) + offset, wrapping at mask + 1. Synchronous: the generator's sink is. */
  writeBytes(bytes: Uint8Array): void {
    let pos = 0;
    while (pos < bytes.length && this.active && this.file.triggerEn) {
      const room = Number(this.mask + 1n - this.offset);
      const n = Math.min(room, bytes.length - pos);
      const at = this.start + this.offset;
      if (this.guard && !this.guard.owns(at, n)) {
        this.guard.corrupt('trace-write', at, n, `trace written at ${span(at, n)} (single-range output ${span(this.start, this.size)}), which the driver does not own`);
        this.error = 'unowned';
        this.active = false;
        this.file.operationalError();
        return;
      }
      try {
        this.phys.writeNow(at, bytes.subarray(pos, pos + n));
      } catch (e) {
        // Model choice: output to memory the target does not back stops tracing as an operational error.
        if (!(e instanceof PtError && e.code === 'bad_address')) throw e;
        this.error = '4-no-memory';
        this.active = false;
        this.file.operationalError();
        return;
      }
      this.offset = (this.offset + BigInt(n)) & this.mask;
      this.written += n;
      pos += n;
    }
  }
}
