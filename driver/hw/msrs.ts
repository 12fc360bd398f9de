// The IA32_RTIT_* MSRs and the performance-monitoring MSRs of the ToPA PMI,
// one field table each (docs/sdm/msrs.md; SDM Vol. 3C "IA32_RTIT_CTL MSR" and
// "IA32_RTIT_STATUS MSR" tables, Vol. 4 MSR index).
import { addr, bitRange, bits, flag, MASK64, msrDefiner, uint, wide } from './field.js';
import { capGate, fixedCounterLimit, gpCounterLimit, maxPhysAddrLimit, rangeGate, type PerfmonCaps, type PtCaps } from './cpuid.js';

const defineMsr = msrDefiner<PtCaps>();
const definePerfMsr = msrDefiner<PerfmonCaps>();

/** IA32_RTIT_CTL (0x570): docs/sdm/msrs.md §3.1. Gates name the CPUID bit that makes a field legal. */
export const IA32_RTIT_CTL = defineMsr('IA32_RTIT_CTL', 0x570, {
  TraceEn: flag(0),
  CYCEn: flag(1, { gate: capGate('psbCyc') }),
  OS: flag(2),
  User: flag(3),
  PwrEvtEn: flag(4, { gate: capGate('powerEvents') }),
  FUPonPTW: flag(5, { gate: capGate('ptwrite') }),
  FabricEn: flag(6, { gate: capGate('transportOutput') }),
  CR3Filter: flag(7, { gate: capGate('cr3Filtering') }),
  ToPA: flag(8, { gate: capGate('topaOutput') }),
  MTCEn: flag(9, { gate: capGate('mtc') }),
  TSCEn: flag(10),
  DisRETC: flag(11),
  PTWEn: flag(12, { gate: capGate('ptwrite') }),
  // No CPUID gate: docs/sdm/README.md Open Question 4 (KVM since 2021 agrees).
  BranchEn: flag(13),
  MTCFreq: uint(17, 14, { gate: capGate('mtc') }),
  CycThresh: uint(22, 19, { gate: capGate('psbCyc') }),
  PSBFreq: uint(27, 24, { gate: capGate('psbCyc') }),
  EventEn: flag(31, { gate: capGate('eventTrace') }),
  ADDR0_CFG: uint(35, 32, { gate: rangeGate(0) }),
  ADDR1_CFG: uint(39, 36, { gate: rangeGate(1) }),
  ADDR2_CFG: uint(43, 40, { gate: rangeGate(2) }),
  ADDR3_CFG: uint(47, 44, { gate: rangeGate(3) }),
  DisTNT: flag(55, { gate: capGate('tntDisable') }),
  InjectPsbPmiOnEnable: flag(56, { gate: capGate('pmiPreservation') }),
});

/**
 * IA32_RTIT_STATUS (0x571): docs/sdm/msrs.md §4. Bits 0–2 are read-only (writes ignored, no #GP);
 * FilterEn exists only with L14.0.EBX[2], otherwise bit 0 is "reserved, writes ignored".
 */
export const IA32_RTIT_STATUS = defineMsr('IA32_RTIT_STATUS', 0x571, {
  FilterEn: flag(0, { readOnly: true, gate: capGate('ipFiltering') }),
  ContextEn: flag(1, { readOnly: true }),
  TriggerEn: flag(2, { readOnly: true }),
  Error: flag(4),
  Stopped: flag(5),
  PendPSB: flag(6, { gate: capGate('pmiPreservation') }),
  PendTopaPMI: flag(7, { gate: capGate('pmiPreservation') }),
  PacketByteCnt: uint(48, 32, { gate: capGate('psbCyc') }),
});

/**
 * IA32_RTIT_OUTPUT_BASE (0x560): docs/sdm/msrs.md §5. BasePhysAddr is MAXPHYADDR−1:7; 52 is the
 * architectural maximum of MAXPHYADDR, and `reservedMaskFor(caps)` adds the bits ≥ caps.maxPhysAddr.
 */
export const IA32_RTIT_OUTPUT_BASE = defineMsr('IA32_RTIT_OUTPUT_BASE', 0x560, {
  BasePhysAddr: addr(51, 7, { limit: maxPhysAddrLimit }),
});

/** IA32_RTIT_OUTPUT_MASK_PTRS (0x561): docs/sdm/msrs.md §6. LowerMask always reads 0x7F. */
export const IA32_RTIT_OUTPUT_MASK_PTRS = defineMsr('IA32_RTIT_OUTPUT_MASK_PTRS', 0x561, {
  LowerMask: uint(6, 0, { readOnly: true }),
  MaskOrTableOffset: uint(31, 7),
  OutputOffset: uint(63, 32),
});

/** IA32_RTIT_CR3_MATCH (0x572): docs/sdm/msrs.md §7. */
export const IA32_RTIT_CR3_MATCH = defineMsr('IA32_RTIT_CR3_MATCH', 0x572, {
  CR3: addr(63, 5),
});

/** IA32_RTIT_ADDRn_A (0x580 + 2n): base of range n, inclusive (docs/sdm/msrs.md §8). */
export const IA32_RTIT_ADDR_A = [0, 1, 2, 3].map((n) =>
  defineMsr(`IA32_RTIT_ADDR${n}_A`, 0x580 + 2 * n, { Address: wide(63, 0) }));
/** IA32_RTIT_ADDRn_B (0x581 + 2n): limit of range n, inclusive (docs/sdm/msrs.md §8). */
export const IA32_RTIT_ADDR_B = [0, 1, 2, 3].map((n) =>
  defineMsr(`IA32_RTIT_ADDR${n}_B`, 0x581 + 2 * n, { Address: wide(63, 0) }));

/**
 * IA32_PERF_GLOBAL_STATUS (0x38E): read-only; bit 55 Trace_ToPA_PMI (docs/sdm/msrs.md §11). One
 * Ovf_PMC bit per general-purpose counter and one Ovf_FixedCtr bit per fixed counter exist: the bits
 * beyond the counts of CPUID leaf 0AH are reserved (`reservedMaskFor(perfmon)`).
 */
export const IA32_PERF_GLOBAL_STATUS = definePerfMsr('IA32_PERF_GLOBAL_STATUS', 0x38e, {
  Ovf_PMC: uint(31, 0, { limit: gpCounterLimit }),
  Ovf_FixedCtr: uint(34, 32, { limit: fixedCounterLimit }),
  Trace_ToPA_PMI: flag(55),
  LBR_Frz: flag(58),
  CTR_Frz: flag(59),
  Ovf_Uncore: flag(61),
  OvfBuf: flag(62),
  CondChgd: flag(63),
});

/** IA32_PERF_GLOBAL_STATUS_RESET / IA32_PERF_GLOBAL_OVF_CTRL (0x390): write 1 to clear (docs/sdm/msrs.md §11). */
export const IA32_PERF_GLOBAL_STATUS_RESET = definePerfMsr('IA32_PERF_GLOBAL_STATUS_RESET', 0x390, {
  ...IA32_PERF_GLOBAL_STATUS.fields,
});

/** IA32_PERF_GLOBAL_STATUS_SET (0x391): write 1 to set (docs/sdm/msrs.md §11). */
export const IA32_PERF_GLOBAL_STATUS_SET = definePerfMsr('IA32_PERF_GLOBAL_STATUS_SET', 0x391, {
  ...IA32_PERF_GLOBAL_STATUS.fields,
});

/** IA32_XSS (0xDA0): bit 8 = PT state, XSAVE component 8 (docs/sdm/msrs.md §12, docs/sdm/xsave.md). */
export const IA32_XSS = defineMsr('IA32_XSS', 0xda0, {
  PT: flag(8, { gate: capGate('xssPtState') }),
});

/** Bit 55 of GLOBAL_STATUS / _RESET / _SET. */
export const TRACE_TOPA_PMI: bigint = IA32_PERF_GLOBAL_STATUS.encode({ Trace_ToPA_PMI: true });

/** Bits at or above MAXPHYADDR: reserved in OUTPUT_BASE and in ToPA entries. */
export function physAddrReservedMask(maxPhysAddr: number): bigint {
  return MASK64 & ~bitRange(maxPhysAddr - 1, 0);
}

/** True when `v` is canonical for a `width`-bit linear address (bits 63:width-1 all equal). */
export function isCanonical(v: bigint, width: number): boolean {
  const top = bits(v, 63, width - 1);
  return top === 0n || top === bits(MASK64, 63, width - 1);
}

/** Every IA32_RTIT_* MSR address, ADDR3_B last (docs/sdm/msrs.md §1). */
export const RTIT_MSRS = [
  IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS, IA32_RTIT_CTL, IA32_RTIT_STATUS, IA32_RTIT_CR3_MATCH,
  ...IA32_RTIT_ADDR_A.flatMap((a, n) => [a, IA32_RTIT_ADDR_B[n]!]),
] as const;

/** Named MSR addresses, for transcripts and error messages. */
export const MSR_NAMES: ReadonlyMap<number, string> = new Map(
  [...RTIT_MSRS, IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET, IA32_XSS]
    .map((m) => [m.address, m.name] as const),
);

/** "IA32_RTIT_CTL (0x570)" or "MSR 0x123". */
export function msrLabel(msr: number): string {
  const name = MSR_NAMES.get(msr);
  return name ? `${name} (0x${msr.toString(16)})` : `MSR 0x${msr.toString(16)}`;
}
