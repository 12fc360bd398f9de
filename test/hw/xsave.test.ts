import { describe, expect, test } from 'vitest';
import {
  buildPtXsaveArea, compactedOffset, decodePtState, encodePtState, ptStateBytes, ptStateReservedProblem,
  readXsaveHeader, xrstorsHeaderProblem, type PtState, type PtStateMsr,
} from '../../driver/hw/xsave.js';
import { thrownCode } from './fixtures.js';

const u64 = (b: Uint8Array, off: number): bigint => new DataView(b.buffer, b.byteOffset, b.byteLength).getBigUint64(off, true);

// docs/sdm/xsave.md §1.1, copied by hand.
const OFFSETS: { msr: PtStateMsr; offset: number }[] = [
  { msr: 'IA32_RTIT_CTL', offset: 0x00 },
  { msr: 'IA32_RTIT_OUTPUT_BASE', offset: 0x08 },
  { msr: 'IA32_RTIT_OUTPUT_MASK_PTRS', offset: 0x10 },
  { msr: 'IA32_RTIT_STATUS', offset: 0x18 },
  { msr: 'IA32_RTIT_CR3_MATCH', offset: 0x20 },
  { msr: 'IA32_RTIT_ADDR0_A', offset: 0x28 },
  { msr: 'IA32_RTIT_ADDR0_B', offset: 0x30 },
  { msr: 'IA32_RTIT_ADDR1_A', offset: 0x38 },
  { msr: 'IA32_RTIT_ADDR1_B', offset: 0x40 },
];

const SAMPLE: PtState = {
  IA32_RTIT_CTL: 0x2105n, IA32_RTIT_OUTPUT_BASE: 0x10_0000n, IA32_RTIT_OUTPUT_MASK_PTRS: 0x10_0000_017fn,
  IA32_RTIT_STATUS: 0x20_0000_0020n, IA32_RTIT_CR3_MATCH: 0x1234_5000n, IA32_RTIT_ADDR0_A: 0x40_1000n,
  IA32_RTIT_ADDR0_B: 0x40_1fffn, IA32_RTIT_ADDR1_A: 0xffff_8000_0000_0000n, IA32_RTIT_ADDR1_B: 0xffff_ffff_ffff_ffffn,
};

describe('PT state component 8 layout', () => {
  test.for(OFFSETS)('$msr is stored little-endian at offset $offset', ({ msr, offset }) => {
    const bytes = encodePtState({ [msr]: 0x1122_3344_5566_7788n });
    expect([...bytes.subarray(offset, offset + 8)]).toEqual([0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11]);
    expect(bytes.filter((b) => b !== 0).length).toBe(8);
  });

  test('the component is 128 bytes by default', () => {
    expect(encodePtState({}).byteLength).toBe(128);
  });

  test('a 72-byte component (the defined part only) is allowed', () => {
    expect(encodePtState(SAMPLE, 72).byteLength).toBe(72);
  });

  test('a component smaller than 72 bytes is a bad_config', () => {
    expect(thrownCode(() => encodePtState({}, 64))).toBe('bad_config');
  });

  test('all 9 MSRs survive encode → decode', () => {
    expect(decodePtState(encodePtState(SAMPLE))).toEqual(SAMPLE);
  });

  test('decoding fewer than 72 bytes is eos', () => {
    expect(thrownCode(() => decodePtState(new Uint8Array(64)))).toBe('eos');
  });
});

describe('reserved bytes 0x48 … end', () => {
  test('an encoded component has none set', () => {
    expect(ptStateReservedProblem(encodePtState(SAMPLE))).toBeUndefined();
  });

  test.for([{ offset: 0x48 }, { offset: 0x7f }])('a non-zero byte at $offset is reported', ({ offset }) => {
    const b = encodePtState(SAMPLE);
    b[offset] = 1;
    expect(ptStateReservedProblem(b)?.offset).toBe(offset);
  });

  test('byte 0x47 (top of ADDR1_B) is not reserved', () => {
    const b = encodePtState({});
    b[0x47] = 0xff;
    expect(ptStateReservedProblem(b)).toBeUndefined();
  });
});

describe('compacted XSAVE area (XSAVES/XRSTORS)', () => {
  test('it is 512 + 64 + component size bytes', () => {
    expect(buildPtXsaveArea({ state: SAMPLE }).byteLength).toBe(704);
    expect(buildPtXsaveArea({ state: SAMPLE, componentSize: 72 }).byteLength).toBe(648);
  });

  test('XSTATE_BV at byte 512 is bit 8 when state is stored', () => {
    expect(u64(buildPtXsaveArea({ state: SAMPLE }), 512)).toBe(0x100n);
  });

  test('XSTATE_BV is 0 for the initial configuration', () => {
    expect(u64(buildPtXsaveArea({}), 512)).toBe(0n);
  });

  test('XCOMP_BV at byte 520 is bit 63 | bit 8', () => {
    expect(u64(buildPtXsaveArea({ state: SAMPLE }), 520)).toBe(0x8000_0000_0000_0100n);
  });

  test('component 8 starts at byte 576 with IA32_RTIT_CTL', () => {
    const area = buildPtXsaveArea({ state: SAMPLE });
    expect(u64(area, 576)).toBe(0x2105n);
    expect(u64(area, 576 + 0x40)).toBe(0xffff_ffff_ffff_ffffn);
  });

  test('readXsaveHeader and ptStateBytes read it back', () => {
    const area = buildPtXsaveArea({ state: SAMPLE });
    expect(readXsaveHeader(area)).toEqual({ xstateBv: 0x100n, xcompBv: 0x8000_0000_0000_0100n });
    expect(decodePtState(ptStateBytes(area)!)).toEqual(SAMPLE);
  });

  test('ptStateBytes is undefined when XCOMP_BV[8] = 0', () => {
    const area = buildPtXsaveArea({ state: SAMPLE });
    area[521] = 0;
    expect(ptStateBytes(area)).toBeUndefined();
  });

  test('component 8 follows a 256-byte component 2 at byte 832', () => {
    const layout = (j: number) => ({ size: j === 2 ? 256 : 128, align64: false });
    expect(compactedOffset(8, 0x8000_0000_0000_0104n, layout)).toBe(832);
  });

  test('a 64-byte-aligned component 8 after a 100-byte component starts at 704', () => {
    const layout = (j: number) => ({ size: j === 2 ? 100 : 128, align64: j === 8 });
    expect(compactedOffset(8, 0x8000_0000_0000_0104n, layout)).toBe(704);
  });
});

// docs/sdm/xsave.md §3 step 1, one area per rule.
describe('XRSTORS header checks', () => {
  const ok = { enabled: 0x100n, address: 0x1000n, cpl: 0 };
  const area = (): Uint8Array => buildPtXsaveArea({ state: SAMPLE });

  test('a well-formed area with IA32_XSS[8] = 1 passes', () => {
    expect(xrstorsHeaderProblem(area(), ok)).toBeUndefined();
  });

  test('CPL 3 fails', () => {
    expect(xrstorsHeaderProblem(area(), { ...ok, cpl: 3 })?.rule).toBe('CPL');
  });

  test('an area not 64-byte aligned fails', () => {
    expect(xrstorsHeaderProblem(area(), { ...ok, address: 0x1008n })?.rule).toBe('alignment');
  });

  test('XCOMP_BV[63] = 0 (standard format) fails', () => {
    const a = area();
    a[527] = 0;
    expect(xrstorsHeaderProblem(a, ok)?.rule).toBe('XCOMP_BV[63]');
  });

  test('XCOMP_BV[8] without IA32_XSS[8] fails', () => {
    expect(xrstorsHeaderProblem(area(), { ...ok, enabled: 0x3n })?.rule).toBe('XCOMP_BV');
  });

  test('XSTATE_BV not a subset of XCOMP_BV fails', () => {
    const a = area();
    a[513] = 0x3; // XSTATE_BV = 0x300
    expect(xrstorsHeaderProblem(a, { ...ok, enabled: 0x300n })?.rule).toBe('XSTATE_BV');
  });

  test.for([{ byte: 16 }, { byte: 63 }])('header byte $byte non-zero fails', ({ byte }) => {
    const a = area();
    a[512 + byte] = 1;
    expect(xrstorsHeaderProblem(a, ok)?.rule).toBe('header-reserved');
  });
});
