// Single-range output (docs/sdm/output.md §3): one size-aligned circular range.
// No PMI, no STOP, no "full": the driver tracks wraps itself (§8) — by the
// offset going backwards between observations, and by the zero fill (a range
// that never wrapped is still zero after OutputOffset).
import { ChunkList } from '../collect/chunks.js';
import type { LossRecorder } from '../collect/ledger.js';
import { decodeSingleRange, encodeSingleRange } from '../hw/output-pointers.js';
import type { TargetIo } from '../io.js';
import type { SingleRangeRequest } from '../request.js';
import type { PhysRegion } from '../target.js';
import type { OwnedBuffer } from '../teardown.js';
import type { HwPointers, OutputPlan, PointerInfo, PointerUpdate } from './plan.js';

/** The single-range output plan. */
export class SingleRangePlan implements OutputPlan {
  readonly scheme = 'single-range';
  readonly chunks = new ChunkList();
  /** True once the driver has seen the offset go backwards (the range wrapped at least once). */
  wrapped = false;
  private lastOffset = 0n;

  private constructor(private readonly io: TargetIo, readonly region: PhysRegion) {}

  /** Allocates the range, aligned to its size (docs/sdm/output.md §3.2 rule 2). Alloc zero-fills it. */
  static async create(io: TargetIo, req: SingleRangeRequest): Promise<SingleRangePlan> {
    return new SingleRangePlan(io, await io.alloc(req.size, req.size));
  }

  get initial(): HwPointers {
    return { outputBase: this.region.base, maskPtrs: encodeSingleRange({ size: BigInt(this.region.size), outputOffset: 0n }) };
  }

  /** Observes the offset (tracing off): a smaller offset than last time means a wrap. */
  async consume(hw: HwPointers): Promise<void> {
    const off = decodeSingleRange(hw.maskPtrs).outputOffset;
    if (off < this.lastOffset) this.wrapped = true;
    this.lastOffset = off;
  }

  /** Nothing to refill: single-range output raises no ToPA PMI (docs/sdm/output.md §3). */
  async refill(): Promise<PointerUpdate> {
    return { branch: 'none' };
  }

  /** Single-range output raises no ToPA PMI (docs/sdm/output.md §3). */
  intFilled(): boolean {
    return false;
  }

  pointerInfo(): PointerInfo {
    return { atFullStopEntry: false };
  }

  /**
   * After the final stop: the stream is the oldest surviving byte to the newest. After a wrap that
   * is [off, size) then [0, off), and the overwritten bytes are a 'wrap' loss at offset 0: counted
   * when the target says how much it wrote (`written`), null otherwise.
   */
  async finish(hw: HwPointers, losses: LossRecorder, written?: number): Promise<void> {
    await this.consume(hw);
    const off = Number(this.lastOffset);
    const all = await this.io.read(this.region.base, this.region.size);
    if (all.subarray(off).some((b) => b !== 0)) this.wrapped = true;
    if (!this.wrapped) {
      this.chunks.push({ addr: this.region.base, length: off, data: all.subarray(0, off) });
      return;
    }
    this.chunks.push({ addr: this.region.base + BigInt(off), length: all.length - off, data: all.subarray(off) });
    this.chunks.push({ addr: this.region.base, length: off, data: all.subarray(0, off) });
    losses.add(0, written === undefined ? null : written - all.length, 'wrap');
  }

  buffers(): readonly OwnedBuffer[] {
    return [{ region: this.region, role: 'single-range output' }];
  }
}
