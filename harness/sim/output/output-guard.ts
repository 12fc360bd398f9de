// What the output engines ask before PT touches memory (harness/sim/memory-oracle.ts): whether the
// driver owns the bytes, and where to report an access it does not. One guard per logical
// processor; the engines work without one (their unit tests drive them over bare memory).
import type { CorruptKind } from '../memory-oracle.js';

/** The memory oracle as one CPU's output engines see it. */
export interface OutputGuard {
  /** True when the driver owns every byte of [addr, addr+length). */
  owns(addr: bigint, length: number): boolean;
  /** PT of this CPU reached memory the driver does not own. */
  corrupt(kind: CorruptKind, addr: bigint, length: number, detail: string): void;
}

/** A region PT may write, or a table page it may read, while TraceEn=1 (what a free must not touch). */
export interface Reachable {
  readonly base: bigint;
  readonly size: number;
  /** "ToPA table", "output region (table 0x…, entry 3)", "single-range output". */
  readonly what: string;
}
