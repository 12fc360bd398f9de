import { describe, expect, test } from 'vitest';
import {
  topaEntry, topaEntryProblem, topaSizeBytes, topaSizeEncoding, type TopaEntryContext,
} from '../../driver/hw/topa.js';
import { thrownCode } from './fixtures.js';


describe('ToPA Size encodings (docs/sdm/output.md §4.2: 4 KiB << Size)', () => {
  test.for([
    { enc: 0, bytes: 0x1000n },
    { enc: 1, bytes: 0x2000n },
    { enc: 8, bytes: 0x10_0000n },
    { enc: 9, bytes: 0x20_0000n },
    { enc: 15, bytes: 0x800_0000n },
  ])('encoding $enc is $bytes bytes, and back', ({ enc, bytes }) => {
    expect(topaSizeBytes(enc)).toBe(bytes);
    expect(topaSizeEncoding(bytes)).toBe(enc);
  });

  test.for([{ bytes: 3000 }, { bytes: 0x3000 }, { bytes: 0 }])('a size of $bytes bytes (not a power of two) is a topa_error', ({ bytes }) => {
    expect(thrownCode(() => topaSizeEncoding(bytes))).toBe('topa_error');
  });

  test.for([{ bytes: 2048 }, { bytes: 0x1000_0000 }])('a power of two outside 4 KiB … 128 MiB ($bytes) is a topa_error', ({ bytes }) => {
    expect(thrownCode(() => topaSizeEncoding(bytes))).toBe('topa_error');
  });

  test.for([{ enc: -1 }, { enc: 16 }, { enc: 1.5 }])('encoding $enc is a topa_error', ({ enc }) => {
    expect(thrownCode(() => topaSizeBytes(enc))).toBe('topa_error');
  });
});

describe('topaEntry builder', () => {
  test('a 2 MiB region at 0x1240_0000 with INT and STOP is 0x1240_0254', () => {
    // Base 0x1240_0000 is 2 MiB aligned; Size 9 → 0x240; INT → 0x4; STOP → 0x10.
    expect(topaEntry({ base: 0x1240_0000n, size: 0x20_0000, int: true, stop: true })).toBe(0x1240_0254n);
  });

  test('an END link to 0x8000_0000 is 0x8000_0001', () => {
    expect(topaEntry({ base: 0x8000_0000n, end: true })).toBe(0x8000_0001n);
  });

  test('a 4 KiB region is the default size', () => {
    expect(topaEntry({ base: 0x5000n })).toBe(0x5000n);
  });

  test('a base that is not 4 KiB aligned is a topa_error', () => {
    expect(thrownCode(() => topaEntry({ base: 0x5080n }))).toBe('topa_error');
  });
});

describe('topaEntryProblem: the rules of docs/sdm/output.md §4.7', () => {
  const ctx: TopaEntryContext = { tableBase: 0x10_0000n, tableOffset: 0x10n, multiEntry: true, maxPhysAddr: 39 };
  const mentry0 = { ...ctx, multiEntry: false };

  test('a 4 KiB output entry in slot 2 breaks no rule', () => {
    expect(topaEntryProblem(0x20_0000n, ctx)).toBeUndefined();
  });

  test('an END entry in slot 2 linking back to the table breaks no rule', () => {
    expect(topaEntryProblem(0x10_0001n, ctx)).toBeUndefined();
  });

  test.for([
    { bit: 1, entry: 0x20_0002n },
    { bit: 3, entry: 0x20_0008n },
    { bit: 5, entry: 0x20_0020n },
    { bit: 10, entry: 0x20_0400n },
    { bit: 11, entry: 0x20_0800n },
    { bit: 60, entry: 0x1000_0000_0020_0000n },
  ])('rule 1: reserved bit $bit set', ({ entry }) => {
    expect(topaEntryProblem(entry, ctx)?.rule).toBe('1');
  });

  test('rule 2a: the table base (from OUTPUT_BASE) is not 4 KiB aligned', () => {
    expect(topaEntryProblem(0x20_0000n, { ...ctx, tableBase: 0x10_0080n })?.rule).toBe('2a');
  });

  test('rule 2b: an 8 KiB region at 0x20_1000 is not aligned to its size', () => {
    expect(topaEntryProblem(0x20_1040n, ctx)?.rule).toBe('2b');
  });

  test('rule 2b: a 2 MiB region needs base bits 20:12 clear', () => {
    expect(topaEntryProblem(0x30_0240n, ctx)?.rule).toBe('2b');
  });

  test('rule 2b does not apply to END entries (Size is ignored)', () => {
    expect(topaEntryProblem(0x10_1241n, ctx)).toBeUndefined();
  });

  test('rule 2c: the base sets bit 39 with MAXPHYADDR 39', () => {
    expect(topaEntryProblem(0x80_0000_0000n, ctx)?.rule).toBe('2c');
  });

  test('bit 39 is a legal base bit with MAXPHYADDR 40', () => {
    expect(topaEntryProblem(0x80_0000_0000n, { ...ctx, maxPhysAddr: 40 })).toBeUndefined();
  });

  test('rule 4a: END=1 together with INT=1', () => {
    expect(topaEntryProblem(0x10_0005n, ctx)?.rule).toBe('4a');
  });

  test('rule 4a: END=1 together with STOP=1', () => {
    expect(topaEntryProblem(0x10_0011n, ctx)?.rule).toBe('4a');
  });

  test('rule 4b: END=1 in entry 0 of a table', () => {
    expect(topaEntryProblem(0x10_0001n, { ...ctx, tableOffset: 0n })?.rule).toBe('4b');
  });

  test('single-entry ToPA: entry 0 may be an output entry with INT and STOP', () => {
    expect(topaEntryProblem(0x20_0014n, { ...mentry0, tableOffset: 0n })).toBeUndefined();
  });

  test('single-entry ToPA: entry 1 = END back to the table base is legal', () => {
    expect(topaEntryProblem(0x10_0001n, { ...mentry0, tableOffset: 8n })).toBeUndefined();
  });

  test('rule 4c: single-entry ToPA with an output entry in slot 1', () => {
    expect(topaEntryProblem(0x20_0000n, { ...mentry0, tableOffset: 8n })?.rule).toBe('4c');
  });

  test('rule 4c: single-entry ToPA whose entry 1 links to another table', () => {
    expect(topaEntryProblem(0x30_0001n, { ...mentry0, tableOffset: 8n })?.rule).toBe('4c');
  });

  test('rule 4c: single-entry ToPA reaching slot 2', () => {
    expect(topaEntryProblem(0x10_0001n, mentry0)?.rule).toBe('4c');
  });

  test('a problem carries a message naming what is wrong', () => {
    expect(topaEntryProblem(0x20_0800n, ctx)?.message).toMatch(/reserved bit 11/);
  });
});
