// CPUID enumeration of Intel PT: one row per capability (Linux `pt_caps[]`,
// docs/sdm/cpuid.md). `PtCaps` is what the driver, the model and the codecs'
// gates all read.
import { bits, type Gate, type Limit } from './field.js';

/** A CPUID output register. */
export type CpuidReg = 'eax' | 'ebx' | 'ecx' | 'edx';
/** The four registers one CPUID leaf/sub-leaf returns. */
export interface CpuidRegs { readonly eax: number; readonly ebx: number; readonly ecx: number; readonly edx: number }
/** What a CPU returns for a sub-leaf above its maximum: all zeros. */
export const ZERO_REGS: CpuidRegs = Object.freeze({ eax: 0, ebx: 0, ecx: 0, edx: 0 });

interface CapRow {
  /** What the bit or field enumerates, in the SDM's words ("TNT disable"): messages quote it. */
  readonly what: string;
  readonly leaf: number;
  readonly subleaf: number;
  readonly reg: CpuidReg;
  readonly hi: number;
  readonly lo: number;
}

const row = (what: string, leaf: number, subleaf: number, reg: CpuidReg, hi: number, lo = hi): CapRow => ({ what, leaf, subleaf, reg, hi, lo });

/**
 * Every capability ptlab reads from CPUID, in the SDM's words (docs/sdm/cpuid.md §1–§5).
 * Flags are 1-bit rows; counts and bitmaps are wider rows.
 */
export const PT_CAP_ROWS = {
  /** CPUID.(EAX=07H,ECX=0):EBX[25]: Intel PT supported. */
  intelPt: row('Intel PT', 0x7, 0, 'ebx', 25),
  /** L14.0.EAX: highest sub-leaf of leaf 14H. */
  maxSubleaf: row('the highest sub-leaf of leaf 14H', 0x14, 0, 'eax', 31, 0),
  /** L14.0.EBX[0]: CR3 filtering, IA32_RTIT_CR3_MATCH. */
  cr3Filtering: row('CR3 filtering', 0x14, 0, 'ebx', 0),
  /** L14.0.EBX[1]: configurable PSB and cycle-accurate mode. */
  psbCyc: row('configurable PSB and cycle-accurate mode', 0x14, 0, 'ebx', 1),
  /** L14.0.EBX[2]: IP filtering, TraceStop, RTIT MSRs kept across warm reset. */
  ipFiltering: row('IP filtering and TraceStop', 0x14, 0, 'ebx', 2),
  /** L14.0.EBX[3]: MTC timing packets (and COFI suppression). */
  mtc: row('MTC', 0x14, 0, 'ebx', 3),
  /** L14.0.EBX[4]: PTWRITE. */
  ptwrite: row('PTWRITE', 0x14, 0, 'ebx', 4),
  /** L14.0.EBX[5]: power event trace. */
  powerEvents: row('power event trace', 0x14, 0, 'ebx', 5),
  /** L14.0.EBX[6]: PSB and PMI preservation (InjectPsbPmiOnEnable, PendPSB, PendTopaPMI). */
  pmiPreservation: row('PSB and PMI preservation', 0x14, 0, 'ebx', 6),
  /** L14.0.EBX[7]: Event Trace (EventEn). */
  eventTrace: row('event trace', 0x14, 0, 'ebx', 7),
  /** L14.0.EBX[8]: TNT disable (DisTNT). */
  tntDisable: row('TNT disable', 0x14, 0, 'ebx', 8),
  /** L14.0.ECX[0]: ToPA output. */
  topaOutput: row('ToPA output', 0x14, 0, 'ecx', 0),
  /** L14.0.ECX[1]: ToPA tables may hold multiple output entries (MENTRY). */
  topaMultipleEntries: row('ToPA tables with multiple output entries', 0x14, 0, 'ecx', 1),
  /** L14.0.ECX[2]: single-range output. */
  singleRangeOutput: row('single-range output', 0x14, 0, 'ecx', 2),
  /** L14.0.ECX[3]: output to the trace transport subsystem (FabricEn). */
  transportOutput: row('output to the trace transport subsystem', 0x14, 0, 'ecx', 3),
  /** L14.0.ECX[31]: IP payloads are linear addresses (LIP). */
  lip: row('IP payloads as linear addresses', 0x14, 0, 'ecx', 31),
  /** L14.1.EAX[2:0]: number of address ranges (RANGECNT). */
  numAddressRanges: row('the number of address ranges', 0x14, 1, 'eax', 2, 0),
  /** L14.1.EAX[31:16]: bitmap of supported MTC period encodings. */
  mtcPeriods: row('the supported MTC period encodings', 0x14, 1, 'eax', 31, 16),
  /** L14.1.EBX[15:0]: bitmap of supported cycle threshold encodings. */
  cycThresholds: row('the supported cycle threshold encodings', 0x14, 1, 'ebx', 15, 0),
  /** L14.1.EBX[31:16]: bitmap of supported PSB frequency encodings. */
  psbPeriods: row('the supported PSB frequency encodings', 0x14, 1, 'ebx', 31, 16),
  /** CPUID.(EAX=0DH,ECX=1):EAX[3]: XSAVES/XRSTORS and IA32_XSS. */
  xsaves: row('XSAVES/XRSTORS', 0xd, 1, 'eax', 3),
  /** CPUID.(EAX=0DH,ECX=1):ECX[8]: IA32_XSS[8] (PT state) supported. */
  xssPtState: row('PT state in IA32_XSS[8]', 0xd, 1, 'ecx', 8),
  /** CPUID.(EAX=0DH,ECX=8):EAX: size of XSAVE state component 8. */
  ptStateSize: row('the size of XSAVE state component 8', 0xd, 8, 'eax', 31, 0),
  /** CPUID.80000008H:EAX[7:0]: MAXPHYADDR. */
  maxPhysAddr: row('MAXPHYADDR', 0x8000_0008, 0, 'eax', 7, 0),
  /** CPUID.80000008H:EAX[15:8]: linear-address width. */
  maxLinearAddr: row('the linear-address width', 0x8000_0008, 0, 'eax', 15, 8),
} as const satisfies Record<string, CapRow>;

/** Name of a capability row. */
export type PtCapName = keyof typeof PT_CAP_ROWS;
const FLAG_NAMES = [
  'intelPt', 'cr3Filtering', 'psbCyc', 'ipFiltering', 'mtc', 'ptwrite', 'powerEvents', 'pmiPreservation',
  'eventTrace', 'tntDisable', 'topaOutput', 'topaMultipleEntries', 'singleRangeOutput', 'transportOutput',
  'lip', 'xsaves', 'xssPtState',
] as const;
/** Capabilities that are one bit (booleans in PtCaps). */
export type PtCapFlag = (typeof FLAG_NAMES)[number];
/** Capabilities that are counts or bitmaps (numbers in PtCaps). */
export type PtCapNumber = Exclude<PtCapName, PtCapFlag>;

/** What a CPU enumerates about Intel PT, decoded from CPUID. */
export type PtCaps = { readonly [K in PtCapFlag]: boolean } & { readonly [K in PtCapNumber]: number } & {
  /** CPUID.0:EAX — leaf 14H is valid only when this is ≥ 14H (docs/sdm/cpuid.md §1). */
  readonly maxBasicLeaf: number;
  /** CPUID.0 vendor string, e.g. "GenuineIntel". */
  readonly vendor: string;
};

/** "CPUID.(EAX=14H,ECX=0):EBX[1]" for a capability. */
export function cpuidBitName(cap: PtCapName): string {
  const r: CapRow = PT_CAP_ROWS[cap];
  const range = r.hi === r.lo ? `[${r.lo}]` : `[${r.hi}:${r.lo}]`;
  return `${cpuidLeafName(r.leaf, r.subleaf)}:${r.reg.toUpperCase()}${range}`;
}

/** The SDM's spelling of a leaf: "CPUID.(EAX=07H,ECX=0)" for a leaf with sub-leaves, "CPUID.80000008H" otherwise. */
export function cpuidLeafName(leaf: number, subleaf: number): string {
  const hex = leaf.toString(16).toUpperCase().padStart(2, '0');
  const hasSubleaves = leaf === 0x7 || leaf === 0x14 || leaf === 0xd;
  return hasSubleaves ? `CPUID.(EAX=${hex}H,ECX=${subleaf})` : `CPUID.${hex}H`;
}

/** What a capability enumerates, in the SDM's words: "TNT disable" for tntDisable. */
export function cpuidBitWhat(cap: PtCapName): string {
  return PT_CAP_ROWS[cap].what;
}

/** Every (leaf, subleaf) a probe must read to build `PtCaps` and the CPU's signature (leaf 1, for its errata). */
export const PT_CPUID_QUERIES: readonly (readonly [number, number])[] = [
  [0x0, 0], [0x1, 0], [0x7, 0], [0x14, 0], [0x14, 1], [0xd, 1], [0xd, 8], [0x8000_0000, 0], [0x8000_0008, 0],
];

/** Executes CPUID(leaf, subleaf) on the CPU being probed. */
export type CpuidReader = (leaf: number, subleaf: number) => CpuidRegs;

/** The vendor string of CPUID leaf 0: EBX, EDX, ECX as little-endian ASCII ("GenuineIntel"). */
export function vendorOf(r: CpuidRegs): string {
  const b = Buffer.alloc(12);
  b.writeUInt32LE(r.ebx >>> 0, 0);
  b.writeUInt32LE(r.edx >>> 0, 4);
  b.writeUInt32LE(r.ecx >>> 0, 8);
  return b.toString('latin1');
}

/** A processor's signature as CPUID.01H:EAX gives it: DisplayFamily, DisplayModel, stepping ID. */
export interface CpuSignature {
  readonly family: number;
  readonly model: number;
  readonly stepping: number;
}

/**
 * The signature of CPUID.01H:EAX (SDM Vol. 2A, CPUID "Version Information"): stepping 3:0, model 7:4,
 * family 11:8, extended model 19:16, extended family 27:20. DisplayFamily adds the extended family
 * only when the family is 0FH; DisplayModel prepends the extended model when the family is 06H or 0FH.
 */
export function cpuSignature(eax1: number): CpuSignature {
  const v = BigInt(eax1 >>> 0);
  const family = Number(bits(v, 11, 8)), model = Number(bits(v, 7, 4));
  const extFamily = Number(bits(v, 27, 20)), extModel = Number(bits(v, 19, 16));
  return {
    family: family === 0xf ? family + extFamily : family,
    model: family === 0x6 || family === 0xf ? (extModel << 4) + model : model,
    stepping: Number(bits(v, 3, 0)),
  };
}

/** "06_4FH": the SDM's DisplayFamily_DisplayModel spelling. */
export function familyModelName(cpu: { readonly family: number; readonly model: number }): string {
  const h = (n: number): string => n.toString(16).toUpperCase().padStart(2, '0');
  return `${h(cpu.family)}_${h(cpu.model)}H`;
}

/**
 * Decodes `PtCaps` from CPUID. Leaf 14H is trusted only when leaf 7 EBX[25]=1 and the maximum
 * basic leaf is ≥ 14H (out-of-range leaves return another leaf's data: docs/qemu.md §5); sub-leaf 1
 * only when L14.0.EAX ≥ 1; leaf 80000008H only when the extended range reaches it.
 */
export function decodePtCaps(read: CpuidReader): PtCaps {
  const leaf0 = read(0, 0);
  const maxBasic = leaf0.eax >>> 0;
  const maxExt = (read(0x8000_0000, 0).eax >>> 0);
  const intelPt = maxBasic >= 7 && bits(BigInt(read(0x7, 0).ebx >>> 0), 25, 25) === 1n;
  const ptLeaves = intelPt && maxBasic >= 0x14;
  const sub0Max = ptLeaves ? read(0x14, 0).eax >>> 0 : 0;
  const xsaveLeaves = maxBasic >= 0xd;
  const valid = (r: CapRow): boolean => {
    if (r.leaf === 0x14) return ptLeaves && r.subleaf <= sub0Max;
    if (r.leaf === 0xd) return xsaveLeaves;
    if (r.leaf >= 0x8000_0000) return maxExt >= r.leaf;
    return maxBasic >= r.leaf;
  };
  const out: Record<string, boolean | number | string> = { maxBasicLeaf: maxBasic, vendor: vendorOf(leaf0) };
  for (const [name, r] of Object.entries(PT_CAP_ROWS) as [PtCapName, CapRow][]) {
    const v = valid(r) ? Number(bits(BigInt(read(r.leaf, r.subleaf)[r.reg] >>> 0), r.hi, r.lo)) : 0;
    out[name] = (FLAG_NAMES as readonly string[]).includes(name) ? v === 1 : v;
  }
  // Without leaf 80000008H, the SDM's defaults: 36 physical bits, 48 linear.
  if (!valid(PT_CAP_ROWS.maxPhysAddr)) { out.maxPhysAddr = 36; out.maxLinearAddr = 48; }
  return out as PtCaps;
}

/**
 * Architectural performance monitoring as CPUID leaf 0AH enumerates it (docs/sdm/cpuid.md §5): what
 * decides whether IA32_PERF_GLOBAL_STATUS and its _RESET/_SET MSRs exist and which of their counter
 * bits do (docs/sdm/msrs.md §11).
 */
export interface PerfmonCaps {
  /** CPUID.0AH:EAX[7:0]: the architectural PerfMon version (0: none). */
  readonly version: number;
  /** CPUID.0AH:EAX[15:8]: general-purpose counters per logical processor. */
  readonly gpCounters: number;
  /** CPUID.0AH:EDX[4:0]: fixed-function counters (enumerated from version 2). */
  readonly fixedCounters: number;
}

/** Decodes leaf 0AH; a CPU whose maximum basic leaf is below 0AH has no architectural PerfMon. */
export function decodePerfmon(read: CpuidReader): PerfmonCaps {
  if ((read(0, 0).eax >>> 0) < 0xa) return { version: 0, gpCounters: 0, fixedCounters: 0 };
  const a = BigInt(read(0xa, 0).eax >>> 0), d = BigInt(read(0xa, 0).edx >>> 0);
  const version = Number(bits(a, 7, 0));
  return { version, gpCounters: Number(bits(a, 15, 8)), fixedCounters: version > 1 ? Number(bits(d, 4, 0)) : 0 };
}

/** Limit of IA32_PERF_GLOBAL_STATUS.Ovf_PMC: one bit per general-purpose counter (docs/sdm/msrs.md §11). */
export const gpCounterLimit: Limit<PerfmonCaps> = {
  cpuid: 'CPUID.0AH:EAX[15:8] (general-purpose counters)',
  width: (c) => c.gpCounters,
};

/** Limit of IA32_PERF_GLOBAL_STATUS.Ovf_FixedCtr (bits 34:32): one bit per fixed-function counter from bit 32. */
export const fixedCounterLimit: Limit<PerfmonCaps> = {
  cpuid: 'CPUID.0AH:EDX[4:0] (fixed-function counters)',
  width: (c) => 32 + c.fixedCounters,
};

/** A field gate on one PtCaps flag, named after its CPUID bit. */
export function capGate(cap: PtCapFlag): Gate<PtCaps> {
  return { cpuid: cpuidBitName(cap), what: cpuidBitWhat(cap), test: (c) => c[cap] };
}

/** Gate for ADDRn_CFG / ADDRn_A/B: IP filtering and RANGECNT > n. */
export function rangeGate(n: number): Gate<PtCaps> {
  return {
    cpuid: `${cpuidBitName('ipFiltering')} and ${cpuidBitName('numAddressRanges')} > ${n}`,
    what: `${cpuidBitWhat('ipFiltering')} with more than ${n} address range${n === 1 ? '' : 's'}`,
    test: (c) => c.ipFiltering && c.numAddressRanges > n,
  };
}

/** Limit of physical-address fields: bits at or above MAXPHYADDR are reserved (docs/sdm/msrs.md §5, docs/sdm/output.md §4.2). */
export const maxPhysAddrLimit: Limit<{ readonly maxPhysAddr: number }> = {
  cpuid: `${cpuidBitName('maxPhysAddr')} (MAXPHYADDR)`,
  width: (c) => c.maxPhysAddr,
};
