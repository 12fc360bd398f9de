// Which RDMSR and WRMSR raise #GP(0): ptlab's one rule set, for every MSR the
// reference model implements (the IA32_RTIT_* MSRs, IA32_PERF_GLOBAL_STATUS with
// _RESET and _SET, IA32_XSS, the x2APIC LVT performance-monitor entry), as a pure
// function of the CPU (what CPUID enumerates, its errata, a hypervisor's quirks)
// and of its state (the current IA32_RTIT_CTL, CPL, VMX operation). The rule ids
// are those of the docs/sdm/msrs.md §9 checklist (G1–G5 of §2, CTL.2–CTL.9 of §3.3,
// one per value rule of §4–§8, §11, §11.1 and §12, an erratum's id, KVM.*).
// Reserved bits, CPU-dependent widths and capability gates are the field tables'
// (msrs.ts, lvt.ts; field.ts computes them per CPU); only what no table can say
// (existence, the TraceEn lock, encodings, canonical addresses, errata, KVM) is
// written here. The model's MSR file (harness/sim/msr-file.ts) asks it on every
// RDMSR and WRMSR, the driver's pre-flight (driver/check-request.ts) reads its
// encoding rules, and XRSTORS of PT state (xrstors.ts) judges each image value by
// it. An independent implementation in test/oracle/gp-rules.ts cross-checks it
// (test/sim/gp-differential.test.ts).
import { assertNever } from '../base/assert-never.js';
import { hex } from '../base/hex.js';
import { cpuidBitName, type PerfmonCaps, type PtCaps, type PtCapFlag, type PtCapNumber } from './cpuid.js';
import { ctlGpErratum, describeCtlFields, type ErratumId, type GpErratumId } from './errata.js';
import { bits, describeViolation, MASK64 } from './field.js';
import { IA32_X2APIC_LVT_PMI } from './lvt.js';
import {
  IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET, IA32_RTIT_ADDR_A,
  IA32_RTIT_CR3_MATCH, IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS, IA32_RTIT_STATUS, IA32_XSS,
  isCanonical, msrLabel,
} from './msrs.js';

/**
 * A hypervisor's #GP rules on top of the SDM's, named by the rule they reproduce (a CPU's own are its
 * errata: `MsrCpu.errata`). Every one is KVM's (docs/prior-art.md §6; docs/sdm/msrs.md §3.3, §4, §7).
 */
export type MsrQuirk =
  /** KVM `ctl_bitmask` never unmasks CTL bits 31, 55, 56, whatever leaf 14H says (docs/sdm/msrs.md §4). */
  | 'KVM_CTL_BITMASK'
  /** KVM `MSR_IA32_RTIT_STATUS_MASK`: only STATUS bits {0,1,2,4,5,48:32}; bits 6 and 7 always raise #GP. */
  | 'KVM_STATUS_MASK'
  /** KVM does not check CR3_MATCH bits 4:0 (docs/sdm/msrs.md §7). */
  | 'KVM_CR3_MATCH_LAX'
  /** KVM fails every CTL write while the vCPU is in VMX operation (docs/sdm/msrs.md §3.3 rule 9). */
  | 'KVM_VMX_CTL';

/** Every KVM quirk: a QEMU/KVM guest's MSR rules. */
export const KVM_QUIRKS: readonly MsrQuirk[] = ['KVM_CTL_BITMASK', 'KVM_STATUS_MASK', 'KVM_CR3_MATCH_LAX', 'KVM_VMX_CTL'];

/** The CPU an access is judged on. Absent parts have the defaults their comments give. */
export interface MsrCpu {
  readonly caps: PtCaps;
  /** CPUID leaf 0AH. Absent: no architectural PerfMon, so IA32_PERF_GLOBAL_* do not exist (G2). */
  readonly perfmon?: PerfmonCaps;
  /**
   * CPUID.(0DH,1):EDX:ECX, the IA32_XSS bits the CPU supports (docs/sdm/msrs.md §12). Absent: what
   * the IA32_XSS field table allows for `caps` (bit 8 with CPUID.(0DH,1):ECX[8]).
   */
  readonly xssBits?: bigint;
  /** The CPU's errata (errata.ts `errataOf`): those with a `wrmsr-gp` effect add #GP rules (BDM106). Absent: none. */
  readonly errata?: Iterable<ErratumId>;
  /** Hypervisor rules. Absent: none, the SDM's CPU. */
  readonly quirks?: ReadonlySet<MsrQuirk>;
  /** IA32_VMX_MISC[14]: PT may be used in VMX operation (docs/sdm/msrs.md §13). Absent: 0. */
  readonly ptInVmx?: boolean;
}

/** The logical processor's state at the access. */
export interface MsrCpuState {
  /** The current IA32_RTIT_CTL. */
  readonly ctl: bigint;
  /** Current privilege level; > 0 raises #GP (G5). Absent: 0. */
  readonly cpl?: number;
  /** In VMX operation (after VMXON). Absent: no. */
  readonly inVmxOperation?: boolean;
}

/** The id of a #GP rule: a row of the docs/sdm/msrs.md §9 checklist, an erratum, or a hypervisor's. */
export type MsrRule =
  /** §2: no PT, not enumerated, TraceEn=1 (non-CTL RTIT MSR), a value that is not 64 bits, CPL > 0. */
  | 'G1' | 'G2' | 'G3' | 'G4' | 'G5'
  /** §3.3 rules 2–9 of IA32_RTIT_CTL (rule 1 is G1). */
  | 'CTL.2' | 'CTL.3' | 'CTL.4' | 'CTL.5' | 'CTL.6' | 'CTL.7' | 'CTL.8' | 'CTL.9'
  | 'STATUS.reserved' | 'STATUS.PacketByteCnt'
  | 'OUTPUT_BASE.reserved' | 'OUTPUT_BASE.MAXPHYADDR'
  | 'CR3_MATCH.reserved'
  | 'ADDR.canonical'
  /** §11: IA32_PERF_GLOBAL_STATUS is read-only; reserved bits of _RESET/_SET. */
  | 'PERF_GLOBAL_STATUS.read-only' | 'PERF_GLOBAL.reserved'
  /** §12: an IA32_XSS bit CPUID.(0DH,1) does not enumerate. */
  | 'XSS.reserved'
  /** §11.1: a reserved bit of the LVT performance-monitor entry. */
  | 'LVT.reserved'
  /** An address no row of the checklist implements. */
  | 'MSR.unknown'
  | GpErratumId
  | 'KVM.CTL' | 'KVM.VMX' | 'KVM.STATUS';

/**
 * A #GP(0) of RDMSR or WRMSR, as data: the MSR, the value written and the rule. `reason` starts with
 * the rule id ("CTL.2: reserved bit 18 set"); cpu-fault.ts `describeFault` names the MSR and value with it.
 */
export interface MsrFault {
  readonly op: 'rdmsr' | 'wrmsr';
  readonly msr: number;
  /** The value written (WRMSR only). */
  readonly value?: bigint;
  readonly rule: MsrRule;
  readonly reason: string;
}

/** Which IA32_RTIT_* MSR an address is. */
export type RtitMsr =
  | { readonly kind: 'ctl' | 'status' | 'output_base' | 'mask_ptrs' | 'cr3_match' }
  | { readonly kind: 'addr'; readonly n: number; readonly side: 'A' | 'B' };

/** First address of the RTIT block: G1 applies to every address in 0x560–0x587 (docs/sdm/msrs.md §2). */
export const RTIT_FIRST = 0x560;
/** Last address of the RTIT block (IA32_RTIT_ADDR3_B). */
export const RTIT_LAST = 0x587;

/** The RTIT MSR at `msr`, or undefined for any other address. */
export function rtitMsr(msr: number): RtitMsr | undefined {
  switch (msr) {
    case IA32_RTIT_CTL.address: return { kind: 'ctl' };
    case IA32_RTIT_STATUS.address: return { kind: 'status' };
    case IA32_RTIT_OUTPUT_BASE.address: return { kind: 'output_base' };
    case IA32_RTIT_OUTPUT_MASK_PTRS.address: return { kind: 'mask_ptrs' };
    case IA32_RTIT_CR3_MATCH.address: return { kind: 'cr3_match' };
  }
  const first = IA32_RTIT_ADDR_A[0]!.address;
  if (msr >= first && msr <= first + 7) return { kind: 'addr', n: Math.floor((msr - first) / 2), side: (msr - first) % 2 === 0 ? 'A' : 'B' };
  return undefined;
}

/** The encoding bitmap that gates a CTL field (docs/sdm/msrs.md §3.2, §3.3 rules 5–7); checkRequest reads it too. */
export const CTL_ENCODING_RULES = [
  { rule: 'CTL.5', field: 'MTCFreq', feature: 'mtc', bitmap: 'mtcPeriods' },
  { rule: 'CTL.6', field: 'CycThresh', feature: 'psbCyc', bitmap: 'cycThresholds' },
  { rule: 'CTL.7', field: 'PSBFreq', feature: 'psbCyc', bitmap: 'psbPeriods' },
] as const satisfies readonly CtlEncodingRule[];

/** One of rules 5–7: `field`'s encoding must be a set bit of `bitmap` on a CPU with `feature`. */
export interface CtlEncodingRule {
  readonly rule: MsrRule;
  readonly field: keyof typeof IA32_RTIT_CTL.fields;
  readonly feature: PtCapFlag;
  readonly bitmap: PtCapNumber;
}

/** Whether `caps` enumerates encoding `enc` of a rule's field: bit `enc` of its bitmap (Open Question 5: also for 0). */
export function encodingEnumerated(caps: PtCaps, r: CtlEncodingRule, enc: number): boolean {
  return bits(BigInt(caps[r.bitmap]), enc, enc) === 1n;
}

/** Why RDMSR of `msr` raises #GP: G5, G1, G2 or an unknown MSR only (docs/sdm/msrs.md §9, last line). */
export function rdmsrFault(cpu: MsrCpu, state: MsrCpuState, msr: number): MsrFault | undefined {
  const p = cplProblem('RDMSR', state.cpl) ?? existenceProblem(cpu, msr);
  return p && { op: 'rdmsr', msr, rule: p.rule, reason: `${p.rule}: ${p.detail}` };
}

/**
 * Why WRMSR of `value` to `msr` raises #GP(0), or undefined when the write is legal. Which rule is
 * reported when several hold does not matter architecturally (docs/sdm/msrs.md §2): G5, existence,
 * G4 and G3 come first, then the MSR's value rules, the SDM's before a CPU's errata, quirks last.
 */
export function wrmsrFault(cpu: MsrCpu, state: MsrCpuState, msr: number, value: bigint): MsrFault | undefined {
  const p = wrmsrProblem(cpu, state, msr, value);
  return p && { op: 'wrmsr', msr, value, rule: p.rule, reason: `${p.rule}: ${p.detail}` };
}

/** A rule and what broke it, before the fault is built. */
interface Problem { readonly rule: MsrRule; readonly detail: string }

function wrmsrProblem(cpu: MsrCpu, state: MsrCpuState, msr: number, value: bigint): Problem | undefined {
  const early = cplProblem('WRMSR', state.cpl) ?? existenceProblem(cpu, msr);
  if (early) return early;
  if (value < 0n || value > MASK64) return { rule: 'G4', detail: `value ${value} is not a 64-bit value` };
  const k = rtitMsr(msr);
  if (k !== undefined) {
    if (k.kind !== 'ctl' && IA32_RTIT_CTL.decode(state.ctl).TraceEn) {
      // G3: "a WRMSR that begins and ends with TraceEn set will #GP".
      return { rule: 'G3', detail: `TraceEn=1: only IA32_RTIT_CTL may be written, not ${msrLabel(msr)}` };
    }
    return rtitValueProblem(cpu, state, k, value);
  }
  switch (msr) {
    case IA32_PERF_GLOBAL_STATUS.address:
      return { rule: 'PERF_GLOBAL_STATUS.read-only', detail: `${msrLabel(msr)} is read-only (cleared through 0x390, set through 0x391)` };
    case IA32_PERF_GLOBAL_STATUS_RESET.address:
    case IA32_PERF_GLOBAL_STATUS_SET.address: {
      const codec = msr === IA32_PERF_GLOBAL_STATUS_SET.address ? IA32_PERF_GLOBAL_STATUS_SET : IA32_PERF_GLOBAL_STATUS_RESET;
      const bad = codec.violation(value, cpu.perfmon ?? NO_PERFMON);
      return bad && { rule: 'PERF_GLOBAL.reserved', detail: describeViolation(bad) };
    }
    case IA32_XSS.address: {
      const extra = value & ~xssBitsOf(cpu);
      return extra === 0n ? undefined
        : { rule: 'XSS.reserved', detail: `bits ${hex(extra)} not enumerated in CPUID.(EAX=0DH,ECX=1):EDX:ECX` };
    }
    case IA32_X2APIC_LVT_PMI.address: {
      const bad = IA32_X2APIC_LVT_PMI.violation(value, undefined);
      return bad && { rule: 'LVT.reserved', detail: describeViolation(bad) };
    }
  }
  return undefined; // existenceProblem answered every other address
}

const NO_PERFMON: PerfmonCaps = { version: 0, gpCounters: 0, fixedCounters: 0 };

function xssBitsOf(cpu: MsrCpu): bigint {
  return cpu.xssBits ?? (MASK64 & ~IA32_XSS.reservedMaskFor(cpu.caps));
}

function cplProblem(op: 'RDMSR' | 'WRMSR', cpl: number | undefined): Problem | undefined {
  return cpl !== undefined && cpl > 0 ? { rule: 'G5', detail: `${op} at CPL ${cpl}` } : undefined;
}

/** G1/G2 (docs/sdm/msrs.md §1, §2, §11, §12), or an address the rule set does not implement. */
function existenceProblem(cpu: MsrCpu, msr: number): Problem | undefined {
  const caps = cpu.caps;
  const label = msrLabel(msr);
  if (msr >= RTIT_FIRST && msr <= RTIT_LAST) {
    if (!caps.intelPt) return { rule: 'G1', detail: `Intel PT not supported (${cpuidBitName('intelPt')} = 0): ${label}` };
    const k = rtitMsr(msr);
    return k === undefined ? { rule: 'MSR.unknown', detail: `${hex(msr)} is not an IA32_RTIT_* MSR` } : rtitExistence(caps, k, label);
  }
  const version = cpu.perfmon?.version ?? 0;
  switch (msr) {
    case IA32_PERF_GLOBAL_STATUS.address:
    case IA32_PERF_GLOBAL_STATUS_RESET.address:
      return version >= 2 ? undefined : { rule: 'G2', detail: `${label} needs PerfMon version ≥ 2 (CPUID.0AH:EAX[7:0] = ${version})` };
    case IA32_PERF_GLOBAL_STATUS_SET.address:
      return version > 3 ? undefined : { rule: 'G2', detail: `${label} needs PerfMon version > 3 (CPUID.0AH:EAX[7:0] = ${version})` };
    case IA32_XSS.address:
      return caps.xsaves ? undefined : { rule: 'G2', detail: `${label} needs XSAVES: ${cpuidBitName('xsaves')} = 0` };
    case IA32_X2APIC_LVT_PMI.address:
      return undefined;
    default:
      return { rule: 'MSR.unknown', detail: `${label} is not implemented` };
  }
}

function rtitExistence(caps: PtCaps, k: RtitMsr, label: string): Problem | undefined {
  switch (k.kind) {
    case 'ctl':
    case 'status':
      return undefined;
    case 'output_base':
    case 'mask_ptrs':
      return caps.topaOutput || caps.singleRangeOutput ? undefined : {
        rule: 'G2',
        detail: `${label} exists only with ToPA (${cpuidBitName('topaOutput')}) or single-range output (${cpuidBitName('singleRangeOutput')})`,
      };
    case 'cr3_match':
      return caps.cr3Filtering ? undefined : { rule: 'G2', detail: `${label} needs CR3 filtering: ${cpuidBitName('cr3Filtering')} = 0` };
    case 'addr':
      if (!caps.ipFiltering) return { rule: 'G2', detail: `${label} needs IP filtering: ${cpuidBitName('ipFiltering')} = 0` };
      return k.n < caps.numAddressRanges ? undefined : {
        rule: 'G2', detail: `${label}: range ${k.n} ≥ RANGECNT ${caps.numAddressRanges} (${cpuidBitName('numAddressRanges')})`,
      };
    default:
      return assertNever(k);
  }
}

/** The value rules of one RTIT MSR (docs/sdm/msrs.md §3.3, §4–§8), TraceEn (G3) already judged. */
function rtitValueProblem(cpu: MsrCpu, state: MsrCpuState, k: RtitMsr, value: bigint): Problem | undefined {
  switch (k.kind) {
    case 'ctl': return ctlProblem(cpu, state, value);
    case 'status': return statusProblem(cpu, value);
    case 'output_base': return outputBaseProblem(cpu.caps, value);
    case 'mask_ptrs': return undefined; // no reserved bits; LowerMask writes are ignored (docs/sdm/msrs.md §6)
    case 'cr3_match': {
      if (cpu.quirks?.has('KVM_CR3_MATCH_LAX')) return undefined;
      const v = IA32_RTIT_CR3_MATCH.violation(value, cpu.caps);
      return v ? { rule: 'CR3_MATCH.reserved', detail: `${describeViolation(v)} (bits 4:0 must be 0)` } : undefined;
    }
    case 'addr': {
      // docs/sdm/msrs.md §8: canonical w.r.t. the maximum linear-address width (Open Question 13).
      const width = cpu.caps.maxLinearAddr > 0 ? cpu.caps.maxLinearAddr : 48;
      return isCanonical(value, width) ? undefined : {
        rule: 'ADDR.canonical', detail: `${hex(value)} is not canonical for ${width}-bit linear addresses`,
      };
    }
    default:
      return assertNever(k);
  }
}

const ADDR_CFG = ['ADDR0_CFG', 'ADDR1_CFG', 'ADDR2_CFG', 'ADDR3_CFG'] as const;

/** KVM's `ctl_bitmask` never unmasks EventEn, DisTNT, InjectPsbPmiOnEnable (docs/sdm/msrs.md §4). */
const KVM_NEVER_CTL = ['EventEn', 'DisTNT', 'InjectPsbPmiOnEnable'] as const;
/** KVM's MSR_IA32_RTIT_STATUS_MASK: FilterEn, ContextEn, TriggerEn, Error, Stopped, PacketByteCnt. */
const KVM_STATUS_OK = IA32_RTIT_STATUS.encode({
  FilterEn: true, ContextEn: true, TriggerEn: true, Error: true, Stopped: true, PacketByteCnt: 0x1_ffff,
});

/** docs/sdm/msrs.md §3.3 rules 2–9, then the CPU's errata (BDM106) and KVM. */
function ctlProblem(cpu: MsrCpu, state: MsrCpuState, v: bigint): Problem | undefined {
  const caps = cpu.caps, c = state.ctl;
  const d = IA32_RTIT_CTL.decode(v);
  const bad = IA32_RTIT_CTL.violation(v, caps);
  if (bad) return { rule: 'CTL.2', detail: describeViolation(bad) };
  if (IA32_RTIT_CTL.decode(c).TraceEn && d.TraceEn && v !== c) {
    return { rule: 'CTL.3', detail: `TraceEn=1 lock: value ${hex(v)} differs from the current ${hex(c)} while TraceEn stays 1` };
  }
  for (const f of ADDR_CFG) {
    if (d[f] > 2) return { rule: 'CTL.4', detail: `${f}=${d[f]} is a reserved encoding (0–2 only)` };
  }
  for (const r of CTL_ENCODING_RULES) {
    if (caps[r.feature] && !encodingEnumerated(caps, r, d[r.field])) {
      return { rule: r.rule, detail: `${r.field}=${d[r.field]} not in ${cpuidBitName(r.bitmap)} bitmap ${hex(caps[r.bitmap])}` };
    }
  }
  if (d.TraceEn && !d.ToPA && !d.FabricEn && !caps.singleRangeOutput) {
    return { rule: 'CTL.8', detail: `TraceEn=1 with ToPA=0, FabricEn=0 but no single-range output (${cpuidBitName('singleRangeOutput')} = 0)` };
  }
  if (d.TraceEn && state.inVmxOperation && !cpu.ptInVmx) {
    return { rule: 'CTL.9', detail: 'TraceEn=1 in VMX operation with IA32_VMX_MISC[14] = 0' };
  }
  const erratum = cpu.errata === undefined ? undefined : ctlGpErratum(cpu.errata, v);
  if (erratum) return { rule: erratum.id, detail: `erratum ${erratum.id}: ${describeCtlFields(erratum.fields)}` };
  if (cpu.quirks?.has('KVM_CTL_BITMASK')) {
    const f = KVM_NEVER_CTL.find((name) => d[name]);
    if (f) return { rule: 'KVM.CTL', detail: `KVM never allows ${f} (CTL bit ${IA32_RTIT_CTL.fields[f].lo})` };
  }
  if (cpu.quirks?.has('KVM_VMX_CTL') && state.inVmxOperation) {
    return { rule: 'KVM.VMX', detail: 'KVM: no IA32_RTIT_CTL write while the vCPU is in VMX operation' };
  }
  return undefined;
}

/** docs/sdm/msrs.md §4: reserved bit 3, 31:8 (31:6 without EBX[6]), 63:49; PacketByteCnt≠0 without EBX[1]; KVM's mask. */
function statusProblem(cpu: MsrCpu, v: bigint): Problem | undefined {
  const bad = IA32_RTIT_STATUS.violation(v, cpu.caps);
  if (bad) {
    const rule: MsrRule = bad.kind === 'ungated' && bad.field === 'PacketByteCnt' ? 'STATUS.PacketByteCnt' : 'STATUS.reserved';
    return { rule, detail: describeViolation(bad) };
  }
  if (cpu.quirks?.has('KVM_STATUS_MASK')) {
    const extra = v & ~KVM_STATUS_OK;
    if (extra !== 0n) return { rule: 'KVM.STATUS', detail: `KVM accepts only STATUS bits {0,1,2,4,5,48:32}, not ${hex(extra)}` };
  }
  return undefined;
}

/** docs/sdm/msrs.md §5: bits 6:0 and bits ≥ MAXPHYADDR must be 0 (the field table's BasePhysAddr and its limit). */
function outputBaseProblem(caps: PtCaps, v: bigint): Problem | undefined {
  const bad = IA32_RTIT_OUTPUT_BASE.violation(v, caps);
  if (!bad) return undefined;
  if (bad.kind === 'reserved' && bad.bit < IA32_RTIT_OUTPUT_BASE.fields.BasePhysAddr.lo) {
    return { rule: 'OUTPUT_BASE.reserved', detail: `${describeViolation(bad)} (bits 6:0 must be 0)` };
  }
  const bit = bad.kind === 'ungated' ? -1 : bad.bit;
  return { rule: 'OUTPUT_BASE.MAXPHYADDR', detail: `bit ${bit} set at or above MAXPHYADDR ${caps.maxPhysAddr}` };
}
