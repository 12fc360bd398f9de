// What the PMI handler, the program sequence and collection need from an
// output scheme (single range or a ToPA policy): the first pointers, the
// bookkeeping of what the CPU wrote, and the refill at a PMI.
import type { ChunkList } from '../collect/chunks.js';
import type { OwnedBuffer } from '../teardown.js';

/** OUTPUT_BASE and OUTPUT_MASK_PTRS as read once TraceEn=0 (docs/sdm/output.md §2, §8). */
export interface HwPointers {
  readonly outputBase: bigint;
  readonly maskPtrs: bigint;
}

/**
 * What a refill wants rewritten before tracing resumes, and the branch it took. Only
 * OUTPUT_MASK_PTRS ever moves: a new table is reached through an END entry, which the CPU
 * follows itself (docs/sdm/output.md §4.3), so no refill rewrites OUTPUT_BASE.
 */
export interface PointerUpdate {
  readonly maskPtrs?: bigint;
  /** The branch of the PMI algorithm (docs/sdm/output.md §7.1) the refill took: 'grow', 'chain', 'circularize', … */
  readonly branch: string;
}

/** Where the CPU's pointer is, as the plan understands it. */
export interface PointerInfo {
  /** The current output region is full (OutputOffset = its size) and its entry has STOP: a ToPA stop. */
  readonly atFullStopEntry: boolean;
  /** MASK_PTRS that moves past a full region (next entry, offset 0: docs/sdm/output.md §7.2). */
  readonly nextEntry?: bigint;
}

/** An output scheme with its bookkeeping. */
export interface OutputPlan {
  readonly scheme: 'single-range' | 'topa';
  /** OUTPUT_BASE / OUTPUT_MASK_PTRS to program at enable. */
  readonly initial: HwPointers;
  /** Pieces of the stream found so far, in write order. */
  readonly chunks: ChunkList;
  /** Accounts for everything written up to `hw` (tracing is off). */
  consume(hw: HwPointers): Promise<void>;
  /** After `consume`, at a ToPA PMI: makes room per the policy; may ask for new pointers. */
  refill(hw: HwPointers): Promise<PointerUpdate>;
  /** What the pointers `hw` mean (for the Stopped fix). */
  pointerInfo(hw: HwPointers): PointerInfo;
  /**
   * After the refill of a ToPA stop, when the driver moves the CPU's pointer to `nextEntry`: the next
   * byte goes to the placement after the full STOP region. Without this, a ring whose CPU comes back
   * to the same entry would match the old visit (absent: the plan has no STOP entries).
   */
  pastStop?(): void;
  /**
   * True when the CPU, now at `hw`, has filled an INT region not yet accounted for: a ToPA PMI of
   * this plan is due (how the driver tells whose PMI it is when several contexts share a CPU).
   */
  intFilled(hw: HwPointers): boolean;
  /**
   * After an operational error, when the handler refills nothing (a refill cannot repair it): the
   * INT regions filled so far count as serviced, so the PMI is not due again (absent: no INT regions).
   */
  unrefilled?(): void;
  /**
   * Every region and table the plan allocated, for the session to give back once tracing is
   * confirmed off (TraceSession.release: docs/design.md "The invariant").
   */
  buffers(): readonly OwnedBuffer[];
}
