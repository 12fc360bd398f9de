// MSR addresses the model implements (docs/sdm/msrs.md §1, §11, §11.1, §12).

export const MSR = {
  IA32_PERF_GLOBAL_STATUS: 0x38e,
  /** a.k.a. IA32_PERF_GLOBAL_OVF_CTRL. */
  IA32_PERF_GLOBAL_STATUS_RESET: 0x390,
  IA32_PERF_GLOBAL_STATUS_SET: 0x391,
  IA32_RTIT_OUTPUT_BASE: 0x560,
  IA32_RTIT_OUTPUT_MASK_PTRS: 0x561,
  IA32_RTIT_CTL: 0x570,
  IA32_RTIT_STATUS: 0x571,
  IA32_RTIT_CR3_MATCH: 0x572,
  /** ADDRn_A = 0x580 + 2n, ADDRn_B = 0x581 + 2n. */
  IA32_RTIT_ADDR0_A: 0x580,
  IA32_RTIT_ADDR3_B: 0x587,
  /** x2APIC LVT Performance Monitor register. */
  IA32_X2APIC_LVT_PMI: 0x834,
  IA32_XSS: 0xda0,
} as const;

/** True for 0x560/0x561, 0x570–0x572 and 0x580–0x587: the addresses G1 covers (docs/sdm/msrs.md §2). */
export function isRtitMsr(msr: number): boolean {
  return msr === 0x560 || msr === 0x561 || (msr >= 0x570 && msr <= 0x572) || (msr >= 0x580 && msr <= 0x587);
}

/** The range index n and side of an ADDRn_A/B address, or undefined. */
export function addrRangeOf(msr: number): { n: number; side: 'A' | 'B' } | undefined {
  if (msr < 0x580 || msr > 0x587) return undefined;
  return { n: (msr - 0x580) >> 1, side: (msr & 1) === 0 ? 'A' : 'B' };
}
