// IA32_RTIT_OUTPUT_MASK_PTRS in its two meanings (docs/sdm/msrs.md §6): ToPA
// (entry index + offset in the region) and single-range output (range mask +
// offset), the single-range operational errors and the address computation
// (docs/sdm/output.md §3.1, §3.2).
import { bits, MASK64, pow2 } from './field.js';
import { hex } from '../base/hex.js';
import { IA32_RTIT_OUTPUT_MASK_PTRS } from './msrs.js';
import { PtError } from '../base/errors.js';

/** MASK_PTRS[6:0] always read 1 (docs/sdm/msrs.md §6). */
export const LOWER_MASK = 0x7f;
/** Largest ToPA entry index MaskOrTableOffset can hold (25 bits: a 256 MiB table). */
export const MAX_TOPA_ENTRY_INDEX = 0x1ff_ffff;

/** ToPA meaning of MASK_PTRS: the current entry and the next byte's offset in its region. */
export interface TopaPointers {
  /** MaskOrTableOffset: index of the current entry (table byte offset / 8). */
  readonly entryIndex: number;
  /** OutputOffset: offset of the next byte inside the current output region. */
  readonly outputOffset: number;
}

/** Encodes ToPA pointers: LowerMask = 0x7F, MaskOrTableOffset = entryIndex, OutputOffset. */
export function encodeTopaPointers(p: TopaPointers): bigint {
  return IA32_RTIT_OUTPUT_MASK_PTRS.encode({ LowerMask: LOWER_MASK, MaskOrTableOffset: p.entryIndex, OutputOffset: p.outputOffset });
}

/** Decodes ToPA pointers from a MASK_PTRS value (LowerMask is ignored). */
export function decodeTopaPointers(raw: bigint): TopaPointers {
  const d = IA32_RTIT_OUTPUT_MASK_PTRS.decode(raw);
  return { entryIndex: d.MaskOrTableOffset, outputOffset: d.OutputOffset };
}

/** Single-range meaning of MASK_PTRS: the range mask (bits 31:0, 6:0 read 1) and the offset. */
export interface SingleRangePointers {
  /** OutputMask = MASK_PTRS[31:0]; the range is mask + 1 bytes when the mask is 2^k − 1. */
  readonly mask: bigint;
  /** OutputOffset = MASK_PTRS[63:32]. */
  readonly outputOffset: bigint;
}

/** Encodes a single range of `size` bytes (2^k, 7 ≤ k ≤ 32) with the next byte at `outputOffset`. */
export function encodeSingleRange(r: { readonly size: bigint; readonly outputOffset: bigint }): bigint {
  const { size, outputOffset } = r;
  if (size < 128n || size > pow2(32) || (size & (size - 1n)) !== 0n) {
    throw new PtError('bad_config', `single-range size ${size} is not a power of two from 128 B to 4 GiB`);
  }
  if (outputOffset < 0n || outputOffset >= size) {
    throw new PtError('bad_config', `single-range offset ${outputOffset} is outside the ${size}-byte range`);
  }
  const mask = size - 1n;
  return IA32_RTIT_OUTPUT_MASK_PTRS.encode({
    LowerMask: LOWER_MASK,
    MaskOrTableOffset: Number(bits(mask, 31, 7)),
    OutputOffset: Number(outputOffset),
  });
}

/** Decodes the single-range mask and offset (docs/sdm/output.md §3.1: both zero-extended). */
export function decodeSingleRange(raw: bigint): SingleRangePointers {
  return { mask: bits(raw, 31, 0) | BigInt(LOWER_MASK), outputOffset: bits(raw, 63, 32) };
}

/** Size of the single range, or undefined when the mask is not of the form 2^k − 1. */
export function singleRangeSize(raw: bigint): bigint | undefined {
  const { mask } = decodeSingleRange(raw);
  return ((mask + 1n) & mask) === 0n ? mask + 1n : undefined;
}

/** The single-range operational error of docs/sdm/output.md §3.2 ("1" mask, "2" base/mask overlap, "3" offset). */
export interface SingleRangeProblem {
  readonly rule: '1' | '2' | '3';
  readonly message: string;
}


/**
 * The first single-range operational error (docs/sdm/output.md §3.2 rules 1–3) that OUTPUT_BASE
 * `base` and OUTPUT_MASK_PTRS `maskPtrs` cause once TraceEn=1, or undefined. Rule 4
 * (restricted memory) is the caller's.
 */
export function singleRangeProblem(base: bigint, maskPtrs: bigint): SingleRangeProblem | undefined {
  const { mask, outputOffset } = decodeSingleRange(maskPtrs);
  if (((mask + 1n) & mask) !== 0n) return { rule: '1', message: `OutputMask ${hex(mask)} is not of the form 2^k − 1` };
  if ((base & mask) !== 0n) {
    return { rule: '2', message: `OUTPUT_BASE ${hex(base)} is not aligned to the ${hex(mask + 1n)}-byte range (shares bits with mask ${hex(mask)})` };
  }
  if (outputOffset > mask) return { rule: '3', message: `OutputOffset ${hex(outputOffset)} > OutputMask ${hex(mask)}` };
  return undefined;
}

/** Physical address of the next byte (docs/sdm/output.md §3.1): (base & ~mask) + (offset & mask). */
export function singleRangeNextAddress(base: bigint, maskPtrs: bigint): bigint {
  const { mask, outputOffset } = decodeSingleRange(maskPtrs);
  return ((base & ~mask & MASK64) + (outputOffset & mask)) & MASK64;
}

/** OutputOffset after one more byte: (offset + 1) & mask — the range is circular (docs/sdm/output.md §3.1). */
export function singleRangeAdvance(outputOffset: bigint, mask: bigint): bigint {
  return (outputOffset + 1n) & mask;
}
