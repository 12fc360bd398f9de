// Which RDMSR/WRMSR of an IA32_RTIT_* MSR raises #GP(0), as a pure function of
// the CPU's capabilities, its errata, the current IA32_RTIT_CTL and optional quirks
// (docs/sdm/msrs.md §2, §3.3, §4–§9; errata: errata.ts, docs/sdm/errata.md; KVM: docs/prior-art.md §6).
// The simulator calls it on every access; the value it returns is the fault's reason.
import { cpuidBitName, type PtCaps, type PtCapNumber } from './cpuid.js';
import { ctlGpErratum, describeCtlFields, type ErratumId, type GpErratumId } from './errata.js';
import { bits, describeViolation } from './field.js';
import { assertNever } from '../base/assert-never.js';
import { hex } from '../base/hex.js';
import {
  IA32_RTIT_ADDR_A, IA32_RTIT_CR3_MATCH, IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS,
  IA32_RTIT_STATUS, isCanonical, msrLabel,
} from './msrs.js';

/** Hypervisor-specific #GP rules on top of the SDM's (a CPU's own are its errata: WrmsrContext.errata). */
export interface MsrQuirks {
  /**
   * A KVM guest (docs/prior-art.md §6; docs/sdm/msrs.md §4): CTL bits 31/55/56 always #GP, STATUS accepts only
   * bits {0,1,2,4,5,48:32}, and any CTL write in VMX operation #GPs.
   */
  readonly kvm?: boolean;
}

/** What a WRMSR is judged against. */
export interface WrmsrContext {
  readonly caps: PtCaps;
  /** The current IA32_RTIT_CTL. */
  readonly ctl: bigint;
  /** The CPU's errata (errata.ts `errataOf`): those with a `wrmsr-gp` effect add #GP rules, e.g. BDM106. */
  readonly errata?: Iterable<ErratumId>;
  readonly quirks?: MsrQuirks;
  /** The logical processor is in VMX operation (after VMXON). */
  readonly inVmxOperation?: boolean;
  /** IA32_VMX_MISC[14]: PT may be used in VMX operation. */
  readonly vmxMiscBit14?: boolean;
  /** Current privilege level; > 0 raises #GP (G5). Default 0. */
  readonly cpl?: number;
}

/** The id of a #GP rule: docs/sdm/msrs.md §2 (G*), §3.3 (CTL.n), §4–§8, erratum or hypervisor. */
export type MsrRule =
  | 'G1' | 'G2' | 'G3' | 'G5'
  | 'CTL.2' | 'CTL.3' | 'CTL.4' | 'CTL.5' | 'CTL.6' | 'CTL.7' | 'CTL.8' | 'CTL.9'
  | 'STATUS.reserved' | 'STATUS.PacketByteCnt'
  | 'OUTPUT_BASE.reserved' | 'OUTPUT_BASE.MAXPHYADDR'
  | 'CR3_MATCH.reserved'
  | 'ADDR.canonical'
  | GpErratumId
  | 'KVM.CTL' | 'KVM.VMX' | 'KVM.STATUS';

/** A #GP(0), as data: the rule id and a reason naming the rule and the bit or field. */
export interface MsrProblem {
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

const TRACE_EN = IA32_RTIT_CTL.encode({ TraceEn: true });

function cplProblem(cpl: number | undefined): MsrProblem | undefined {
  return cpl !== undefined && cpl > 0 ? { rule: 'G5', reason: `RDMSR/WRMSR at CPL ${cpl}` } : undefined;
}

/** G1/G2 (docs/sdm/msrs.md §1, §2): the MSR does not exist on a CPU with `caps`. */
function existenceProblem(msr: number, caps: PtCaps): MsrProblem | undefined {
  const inBlock = msr >= RTIT_FIRST && msr <= RTIT_LAST;
  if (inBlock && !caps.intelPt) {
    return { rule: 'G1', reason: `Intel PT not supported (${cpuidBitName('intelPt')} = 0): ${msrLabel(msr)}` };
  }
  const k = rtitMsr(msr);
  if (k === undefined) return inBlock ? { rule: 'G2', reason: `${hex(msr)} is not an IA32_RTIT_* MSR` } : undefined;
  const label = msrLabel(msr);
  switch (k.kind) {
    case 'ctl':
    case 'status':
      return undefined;
    case 'output_base':
    case 'mask_ptrs':
      return caps.topaOutput || caps.singleRangeOutput ? undefined : {
        rule: 'G2',
        reason: `${label} exists only with ToPA (${cpuidBitName('topaOutput')}) or single-range output (${cpuidBitName('singleRangeOutput')})`,
      };
    case 'cr3_match':
      return caps.cr3Filtering ? undefined : { rule: 'G2', reason: `${label} needs CR3 filtering: ${cpuidBitName('cr3Filtering')} = 0` };
    case 'addr':
      if (!caps.ipFiltering) return { rule: 'G2', reason: `${label} needs IP filtering: ${cpuidBitName('ipFiltering')} = 0` };
      return k.n < caps.numAddressRanges ? undefined : {
        rule: 'G2', reason: `${label}: range ${k.n} ≥ RANGECNT ${caps.numAddressRanges} (${cpuidBitName('numAddressRanges')})`,
      };
    default:
      return assertNever(k);
  }
}


/** Why RDMSR of `msr` raises #GP on a CPU with `caps` (G1, G2, G5 only: docs/sdm/msrs.md §9), or undefined. */
export function rdmsrProblem(msr: number, caps: PtCaps, opts: { cpl?: number } = {}): MsrProblem | undefined {
  return cplProblem(opts.cpl) ?? existenceProblem(msr, caps);
}

/**
 * Why WRMSR of `value` to `msr` raises #GP(0), or undefined when the write is legal. Judges the
 * IA32_RTIT_* MSRs only; any other address gives undefined. Which rule is reported when several
 * hold does not matter architecturally (docs/sdm/msrs.md §2): the SDM rules come first, quirks last.
 */
export function wrmsrProblem(msr: number, value: bigint, ctx: WrmsrContext): MsrProblem | undefined {
  const early = cplProblem(ctx.cpl) ?? existenceProblem(msr, ctx.caps);
  if (early) return early;
  const k = rtitMsr(msr);
  if (k === undefined) return undefined;
  if (k.kind !== 'ctl' && (ctx.ctl & TRACE_EN) !== 0n) {
    // G3: "a WRMSR that begins and ends with TraceEn set will #GP".
    return { rule: 'G3', reason: `TraceEn=1: only IA32_RTIT_CTL may be written, not ${msrLabel(msr)}` };
  }
  switch (k.kind) {
    case 'ctl': return ctlProblem(value, ctx);
    case 'status': return statusProblem(value, ctx);
    case 'output_base': return outputBaseProblem(value, ctx.caps);
    case 'mask_ptrs': return undefined; // no reserved bits; LowerMask writes are ignored (docs/sdm/msrs.md §6)
    case 'cr3_match': {
      const v = IA32_RTIT_CR3_MATCH.violation(value, ctx.caps);
      return v ? { rule: 'CR3_MATCH.reserved', reason: `${describeViolation(v)} (bits 4:0 must be 0)` } : undefined;
    }
    case 'addr': {
      // docs/sdm/msrs.md §8: canonical w.r.t. the maximum linear-address width (Open Question 13).
      const width = ctx.caps.maxLinearAddr > 0 ? ctx.caps.maxLinearAddr : 48;
      return isCanonical(value, width) ? undefined : {
        rule: 'ADDR.canonical', reason: `${hex(value)} is not canonical for ${width}-bit linear addresses`,
      };
    }
    default:
      return assertNever(k);
  }
}

/** The encoding bitmap that gates a CTL field (docs/sdm/msrs.md §3.2, §3.3 rules 5–7); checkRequest reads it too. */
export const BITMAP_RULES = [
  { rule: 'CTL.5', field: 'MTCFreq', feature: 'mtc', bitmap: 'mtcPeriods' },
  { rule: 'CTL.6', field: 'CycThresh', feature: 'psbCyc', bitmap: 'cycThresholds' },
  { rule: 'CTL.7', field: 'PSBFreq', feature: 'psbCyc', bitmap: 'psbPeriods' },
] as const satisfies readonly { rule: MsrRule; field: keyof typeof IA32_RTIT_CTL.fields; feature: keyof PtCaps; bitmap: PtCapNumber }[];

const ADDR_CFG = ['ADDR0_CFG', 'ADDR1_CFG', 'ADDR2_CFG', 'ADDR3_CFG'] as const;

/** KVM's `ctl_bitmask` never unmasks EventEn, DisTNT, InjectPsbPmiOnEnable (docs/sdm/msrs.md §4). */
const KVM_NEVER_CTL = ['EventEn', 'DisTNT', 'InjectPsbPmiOnEnable'] as const;
/** KVM's MSR_IA32_RTIT_STATUS_MASK: FilterEn, ContextEn, TriggerEn, Error, Stopped, PacketByteCnt. */
const KVM_STATUS_OK = IA32_RTIT_STATUS.encode({
  FilterEn: true, ContextEn: true, TriggerEn: true, Error: true, Stopped: true, PacketByteCnt: 0x1_ffff,
});

/** docs/sdm/msrs.md §3.3 rules 2–9, then the CPU's errata (BDM106) and KVM. */
function ctlProblem(v: bigint, ctx: WrmsrContext): MsrProblem | undefined {
  const { caps, ctl: c } = ctx;
  const d = IA32_RTIT_CTL.decode(v);
  const bad = IA32_RTIT_CTL.violation(v, caps);
  if (bad) return { rule: 'CTL.2', reason: describeViolation(bad) };
  if ((c & TRACE_EN) !== 0n && d.TraceEn && v !== c) {
    return { rule: 'CTL.3', reason: `TraceEn=1 lock: value ${hex(v)} differs from the current ${hex(c)} while TraceEn stays 1` };
  }
  for (const f of ADDR_CFG) {
    if (d[f] > 2) return { rule: 'CTL.4', reason: `${f}=${d[f]} is a reserved encoding (0–2 only)` };
  }
  for (const r of BITMAP_RULES) {
    const bitmap = caps[r.bitmap];
    if (caps[r.feature] && bits(BigInt(bitmap), d[r.field], d[r.field]) === 0n) {
      return { rule: r.rule, reason: `${r.field}=${d[r.field]} not in ${cpuidBitName(r.bitmap)} bitmap ${hex(bitmap)}` };
    }
  }
  if (d.TraceEn && !d.ToPA && !d.FabricEn && !caps.singleRangeOutput) {
    return { rule: 'CTL.8', reason: `TraceEn=1 with ToPA=0, FabricEn=0 but no single-range output (${cpuidBitName('singleRangeOutput')} = 0)` };
  }
  if (d.TraceEn && ctx.inVmxOperation && !ctx.vmxMiscBit14) {
    return { rule: 'CTL.9', reason: 'TraceEn=1 in VMX operation with IA32_VMX_MISC[14] = 0' };
  }
  const erratum = ctx.errata === undefined ? undefined : ctlGpErratum(ctx.errata, v);
  if (erratum) return { rule: erratum.id, reason: `erratum ${erratum.id}: ${describeCtlFields(erratum.fields)}` };
  if (ctx.quirks?.kvm) {
    const f = KVM_NEVER_CTL.find((name) => d[name]);
    if (f) return { rule: 'KVM.CTL', reason: `KVM never allows ${f} (CTL bit ${IA32_RTIT_CTL.fields[f].lo})` };
    if (ctx.inVmxOperation) return { rule: 'KVM.VMX', reason: 'KVM: no IA32_RTIT_CTL write while the vCPU is in VMX operation' };
  }
  return undefined;
}

/** docs/sdm/msrs.md §4: reserved bit 3, 31:8 (31:6 without EBX[6]), 63:49; PacketByteCnt≠0 without EBX[1]. */
function statusProblem(v: bigint, ctx: WrmsrContext): MsrProblem | undefined {
  const bad = IA32_RTIT_STATUS.violation(v, ctx.caps);
  if (bad) {
    const rule: MsrRule = bad.kind === 'ungated' && bad.field === 'PacketByteCnt' ? 'STATUS.PacketByteCnt' : 'STATUS.reserved';
    return { rule, reason: describeViolation(bad) };
  }
  if (ctx.quirks?.kvm) {
    const extra = v & ~KVM_STATUS_OK;
    if (extra !== 0n) return { rule: 'KVM.STATUS', reason: `KVM accepts only STATUS bits {0,1,2,4,5,48:32}, not ${hex(extra)}` };
  }
  return undefined;
}

/** docs/sdm/msrs.md §5: bits 6:0 and bits ≥ MAXPHYADDR must be 0. */
function outputBaseProblem(v: bigint, caps: PtCaps): MsrProblem | undefined {
  const bad = IA32_RTIT_OUTPUT_BASE.violation(v, caps);
  if (!bad) return undefined;
  if (bad.kind === 'reserved' && bad.bit < 7) return { rule: 'OUTPUT_BASE.reserved', reason: `${describeViolation(bad)} (bits 6:0 must be 0)` };
  const bit = bad.kind === 'ungated' ? -1 : bad.bit;
  return { rule: 'OUTPUT_BASE.MAXPHYADDR', reason: `bit ${bit} set at or above MAXPHYADDR ${caps.maxPhysAddr}` };
}
