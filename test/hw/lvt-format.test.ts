import { describe, expect, test } from 'vitest';
import { IA32_X2APIC_LVT_PMI, LVT_PMI_RESET, lvtDeliveryMode, lvtPmiEntry, lvtUnmasked } from '../../driver/hw/lvt.js';
import { formatMsr } from '../../driver/hw/format.js';

// docs/sdm/msrs.md §11.1.
describe('LVT Performance Monitor entry', () => {
  test('it is x2APIC MSR 0x834', () => {
    expect(IA32_X2APIC_LVT_PMI.address).toBe(0x834);
  });

  test('the reset value 0x1_0000 is masked', () => {
    expect(LVT_PMI_RESET).toBe(0x1_0000n);
    expect(IA32_X2APIC_LVT_PMI.decode(LVT_PMI_RESET).Mask).toBe(true);
  });

  test('the SDM recipe entry is the bare vector (Fixed, not masked)', () => {
    expect(lvtPmiEntry(0xfe)).toBe(0xfen);
  });

  test('NMI delivery is mode 100b', () => {
    expect(lvtPmiEntry(0, 'NMI')).toBe(0x400n);
  });

  test.for([
    { raw: 0x0n, want: 'Fixed' },
    { raw: 0x200n, want: 'SMI' },
    { raw: 0x400n, want: 'NMI' },
    { raw: 0x500n, want: undefined }, // INIT is not allowed
    { raw: 0x700n, want: undefined }, // ExtINT is not allowed
  ])('delivery mode of $raw is $want', ({ raw, want }) => {
    expect(lvtDeliveryMode(raw)).toBe(want);
  });

  test('unmasking clears only bit 16', () => {
    expect(lvtUnmasked(0x1_14fen)).toBe(0x14fen);
  });

  test('DeliveryStatus is read-only', () => {
    expect(IA32_X2APIC_LVT_PMI.readOnlyMask).toBe(0x1000n);
  });
});

describe('formatMsr', () => {
  test.for([
    { msr: 0x570, value: 0xe10dn, want: 'IA32_RTIT_CTL TraceEn OS User ToPA BranchEn MTCFreq=3' },
    { msr: 0x570, value: 0n, want: 'IA32_RTIT_CTL 0' },
    { msr: 0x570, value: 0x4_0001n, want: 'IA32_RTIT_CTL TraceEn reserved=0x40000' },
    { msr: 0x571, value: 0x1234_0000_0030n, want: 'IA32_RTIT_STATUS Error Stopped PacketByteCnt=4660' },
    { msr: 0x560, value: 0x10_0000n, want: 'IA32_RTIT_OUTPUT_BASE BasePhysAddr=0x100000' },
    { msr: 0x561, value: 0x10_0000_01ffn, want: 'IA32_RTIT_OUTPUT_MASK_PTRS LowerMask=127 MaskOrTableOffset=3 OutputOffset=16' },
    { msr: 0x583, value: 0x40_1fffn, want: 'IA32_RTIT_ADDR1_B Address=0x401fff' },
    { msr: 0x38e, value: 0x0080_0000_0000_0000n, want: 'IA32_PERF_GLOBAL_STATUS Trace_ToPA_PMI' },
    { msr: 0x834, value: 0x1_04fen, want: 'IA32_X2APIC_LVT_PMI Vector=254 DeliveryMode=4 Mask' },
    { msr: 0x123, value: 0x5n, want: 'MSR 0x123 0x5' },
  ])('prints $msr = $value as "$want"', ({ msr, value, want }) => {
    expect(formatMsr(msr, value)).toBe(want);
  });
});
