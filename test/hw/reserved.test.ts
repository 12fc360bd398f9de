// Reserved masks, HAND-WRITTEN from the spec text (docs/sdm/msrs.md §3.1, §4, §5, §7;
// docs/sdm/output.md §4.2; docs/sdm/msrs.md §11.1), per CPU profile.
import { describe, expect, test } from 'vitest';
import {
  IA32_RTIT_CR3_MATCH, IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS, IA32_RTIT_STATUS,
} from '../../driver/hw/msrs.js';
import { topaReservedMask } from '../../driver/hw/topa.js';
import { IA32_X2APIC_LVT_PMI } from '../../driver/hw/lvt.js';
import { CAPS } from './fixtures.js';

describe('IA32_RTIT_CTL reserved mask', () => {
  test.for([
    // §3.1: with no optional feature, every bit except 0, 2, 3, 10, 11, 13.
    { profile: 'none', want: 0xffff_ffff_ffff_d3f2n },
    // §3.5: Broadwell — bits 1, 4–6, 9, 12 and 63:14 (CR3Filter 7 and ToPA 8 are enumerated).
    { profile: 'bdw', want: 0xffff_ffff_ffff_d272n },
    // Kaby Lake (EBX=0xF, ECX=0x7, 2 ranges): allowed 0–3, 7–11, 13, 14–17, 19–22, 24–27, 32–39.
    { profile: 'kbl', want: 0xffff_ff00_f084_1070n },
    // full: only the architecturally reserved 18, 23, 30:28, 54:48, 63:57 remain.
    { profile: 'full', want: 0xfe7f_0000_7084_0000n },
  ] as const)('is $want on the $profile profile', ({ profile, want }) => {
    expect(IA32_RTIT_CTL.reservedMaskFor(CAPS[profile])).toBe(want);
  });

  test('without any CPU, the table reserves 18, 23, 30:28, 54:48, 63:57', () => {
    expect(IA32_RTIT_CTL.reservedMask).toBe(0xfe7f_0000_7084_0000n);
  });
});

describe('IA32_RTIT_STATUS reserved mask', () => {
  test.for([
    // §4: bit 3, 31:6 (no EBX[6]), PacketByteCnt 48:32 (no EBX[1]), 63:49. Bit 0 (FilterEn without
    // EBX[2]) is "reserved, writes ignored": not a #GP bit.
    { profile: 'none', want: 0xffff_ffff_ffff_ffc8n },
    { profile: 'bdw', want: 0xffff_ffff_ffff_ffc8n },
    // bit 3, 31:6, 63:49.
    { profile: 'kbl', want: 0xfffe_0000_ffff_ffc8n },
    // bit 3, 31:8, 63:49.
    { profile: 'full', want: 0xfffe_0000_ffff_ff08n },
  ] as const)('is $want on the $profile profile', ({ profile, want }) => {
    expect(IA32_RTIT_STATUS.reservedMaskFor(CAPS[profile])).toBe(want);
  });

  test('bits 0–2 are read-only (writes ignored)', () => {
    expect(IA32_RTIT_STATUS.readOnlyMask).toBe(0x7n);
  });
});

describe('IA32_RTIT_OUTPUT_BASE reserved mask: bits 6:0 and MAXPHYADDR and up', () => {
  test.for([
    { profile: 'none', maxPhys: 39, want: 0xffff_ff80_0000_007fn },
    { profile: 'bdw', maxPhys: 46, want: 0xffff_c000_0000_007fn },
    { profile: 'kbl', maxPhys: 39, want: 0xffff_ff80_0000_007fn },
    { profile: 'full', maxPhys: 52, want: 0xfff0_0000_0000_007fn },
  ] as const)('is $want on the $profile profile (MAXPHYADDR $maxPhys)', ({ profile, maxPhys, want }) => {
    expect(CAPS[profile].maxPhysAddr).toBe(maxPhys);
    expect(IA32_RTIT_OUTPUT_BASE.reservedMaskFor(CAPS[profile])).toBe(want);
  });
});

test('IA32_RTIT_OUTPUT_MASK_PTRS has no reserved bit; 6:0 are read-only', () => {
  expect(IA32_RTIT_OUTPUT_MASK_PTRS.reservedMaskFor(CAPS.kbl)).toBe(0n);
  expect(IA32_RTIT_OUTPUT_MASK_PTRS.readOnlyMask).toBe(0x7fn);
});

test('IA32_RTIT_CR3_MATCH reserves bits 4:0 only', () => {
  expect(IA32_RTIT_CR3_MATCH.reservedMaskFor(CAPS.kbl)).toBe(0x1fn);
});

describe('ToPA entry reserved mask: bits 1, 3, 5, 11:10 and MAXPHYADDR and up', () => {
  test.for([
    { maxPhys: 39, want: 0xffff_ff80_0000_0c2an },
    { maxPhys: 46, want: 0xffff_c000_0000_0c2an },
    { maxPhys: 52, want: 0xfff0_0000_0000_0c2an },
  ])('is $want for MAXPHYADDR $maxPhys', ({ maxPhys, want }) => {
    expect(topaReservedMask(maxPhys)).toBe(want);
  });
});

test('the LVT Performance Monitor entry reserves all but 7:0, 10:8, 12, 16', () => {
  expect(IA32_X2APIC_LVT_PMI.reservedMask).toBe(0xffff_ffff_fffe_e800n);
});
