import { describe, expect, test } from 'vitest';
import {
  decodeSingleRange, decodeTopaPointers, encodeSingleRange, encodeTopaPointers, singleRangeAdvance,
  singleRangeNextAddress, singleRangeProblem, singleRangeSize,
} from '../../driver/hw/output-pointers.js';
import { thrownCode } from './fixtures.js';


// docs/sdm/msrs.md §6: ToPA MASK_PTRS = (entryIndex << 7) | 0x7F | (outputOffset << 32).
describe('ToPA pointers', () => {
  test.for([
    { entryIndex: 0, outputOffset: 0, raw: 0x7fn },
    { entryIndex: 3, outputOffset: 0x1000, raw: 0x1000_0000_01ffn },
    { entryIndex: 0x1ff_ffff, outputOffset: 0xffff_ffff, raw: 0xffff_ffff_ffff_ffffn },
  ])('entry $entryIndex, offset $outputOffset ↔ $raw', ({ entryIndex, outputOffset, raw }) => {
    expect(encodeTopaPointers({ entryIndex, outputOffset })).toBe(raw);
    expect(decodeTopaPointers(raw)).toEqual({ entryIndex, outputOffset });
  });

  test('decoding ignores LowerMask', () => {
    expect(decodeTopaPointers(0x10_0000_0180n)).toEqual({ entryIndex: 3, outputOffset: 0x10 });
  });
});

// docs/sdm/msrs.md §6: single range of 2^k bytes: MASK_PTRS[31:0] = 2^k − 1, [63:32] = offset.
describe('single-range pointers', () => {
  test.for([
    { size: 0x80n, outputOffset: 0n, raw: 0x7fn },
    { size: 0x1000n, outputOffset: 0x10n, raw: 0x10_0000_0fffn },
    { size: 0x1_0000_0000n, outputOffset: 0xffff_fffen, raw: 0xffff_fffe_ffff_ffffn },
  ])('$size bytes at offset $outputOffset ↔ $raw', ({ size, outputOffset, raw }) => {
    expect(encodeSingleRange({ size, outputOffset })).toBe(raw);
    expect(decodeSingleRange(raw)).toEqual({ mask: size - 1n, outputOffset });
    expect(singleRangeSize(raw)).toBe(size);
  });

  test.for([{ size: 64n }, { size: 0x3000n }, { size: 0x2_0000_0000n }])('a size of $size bytes is a bad_config', ({ size }) => {
    expect(thrownCode(() => encodeSingleRange({ size, outputOffset: 0n }))).toBe('bad_config');
  });

  test('an offset outside the range is a bad_config', () => {
    expect(thrownCode(() => encodeSingleRange({ size: 0x1000n, outputOffset: 0x1000n }))).toBe('bad_config');
  });

  test('a non-contiguous mask has no size', () => {
    expect(singleRangeSize(0x17ffn)).toBeUndefined();
  });

  test('bits 6:0 always count as mask bits (they read 1)', () => {
    expect(decodeSingleRange(0x0n).mask).toBe(0x7fn);
  });
});

// docs/sdm/output.md §3.2.
describe('single-range operational errors', () => {
  test('a 4 KiB-aligned base with a 4 KiB mask and offset 0x10 is fine', () => {
    expect(singleRangeProblem(0x10_0000n, 0x10_0000_0fffn)).toBeUndefined();
  });

  test('rule 1: mask 0x17FF is not contiguous', () => {
    expect(singleRangeProblem(0x10_0000n, 0x17ffn)?.rule).toBe('1');
  });

  test('rule 2: base 0x10_0800 shares bits with mask 0xFFF', () => {
    expect(singleRangeProblem(0x10_0800n, 0xfffn)?.rule).toBe('2');
  });

  test('rule 3: offset 0x1000 is greater than mask 0xFFF', () => {
    expect(singleRangeProblem(0x10_0000n, 0x1000_0000_0fffn)?.rule).toBe('3');
  });

  test('offset equal to the mask is legal', () => {
    expect(singleRangeProblem(0x10_0000n, 0xfff_0000_0fffn)).toBeUndefined();
  });
});

// docs/sdm/output.md §3.1: physAddr = (base & ~mask) + (offset & mask); offset = (offset + 1) & mask.
describe('single-range address computation', () => {
  test('the next byte of a 4 KiB range at 0x10_0000 with offset 0x123 is at 0x10_0123', () => {
    expect(singleRangeNextAddress(0x10_0000n, 0x123_0000_0fffn)).toBe(0x10_0123n);
  });

  test('base bits under the mask are ignored in the address', () => {
    expect(singleRangeNextAddress(0x10_0800n, 0x10_0000_0fffn)).toBe(0x10_0010n);
  });

  test('the offset wraps to 0 after the last byte', () => {
    expect(singleRangeAdvance(0xfffn, 0xfffn)).toBe(0n);
    expect(singleRangeAdvance(0x7fen, 0xfffn)).toBe(0x7ffn);
  });
});
