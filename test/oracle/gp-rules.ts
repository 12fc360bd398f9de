// TEST ORACLE, not production code: an independent implementation of the #GP
// rules of RDMSR/WRMSR on the PT unit's MSRs, kept only to cross-check the rule
// set the model and the driver share (driver/hw/msr-rules.ts) in
// test/sim/gp-differential.test.ts. Why a second implementation: the model and
// the driver now ask the same rules, so a bug in them would be shared by both
// and cancel itself out in every scenario (docs/design.md "Layers"). This file
// was written separately, rule by rule from docs/sdm/msrs.md (§2 G1–G6, §3.3
// rules 1–9, §4–§9, §11–§12; docs/prior-art.md §6 for the KVM quirks;
// docs/sdm/errata.md for BDM106), with its own bit lists rather than the field
// tables, its own rule ids and its own order; it was the model's until the rules
// were shared. Only code under test/ may import it; keep it independent: it must
// not import driver/hw/msr-rules.ts, driver/hw/lvt.ts or the field tables'
// reserved masks. Where it knowingly differs from the shared rules, the
// differential test lists and asserts the divergence.
import { bitRange, bits, MASK64 } from '../../driver/hw/field.js';
import { cpuidBitName, type PtCaps } from '../../driver/hw/cpuid.js';
import { isCanonical } from '../../driver/hw/msrs.js';
import type { CpuProfile } from '../../harness/sim/profiles.js';
import { addrRangeOf, isRtitMsr, MSR } from '../../harness/sim/msr-addresses.js';

/** Which rule raised a #GP: the checklist row of docs/sdm/msrs.md §9 or §3.3 rule it implements. */
export type GpRule =
  | 'G1-no-pt' | 'G2-not-enumerated' | 'G3-traceen-set' | 'G5-cpl'
  | 'CTL-2-reserved' | 'CTL-3-traceen-lock' | 'CTL-4-addr-cfg' | 'CTL-5-mtc-freq' | 'CTL-6-cyc-thresh'
  | 'CTL-7-psb-freq' | 'CTL-8-no-single-range' | 'CTL-9-vmx' | 'BDM106-branchen'
  | 'STATUS-reserved' | 'STATUS-packetbytecnt'
  | 'OUTPUT_BASE-low-bits' | 'OUTPUT_BASE-maxphyaddr'
  | 'CR3_MATCH-low-bits' | 'ADDR-noncanonical'
  | 'no-such-msr' | 'read-only-msr' | 'PERF-reserved' | 'XSS-unsupported' | 'LVT-reserved';

export interface GpFault { readonly rule: GpRule; readonly reason: string }

/** What the rules need to know about the CPU. */
export interface RuleCtx {
  readonly profile: CpuProfile;
  readonly caps: PtCaps;
  readonly perfmonVersion: number;
  /** CPUID.(0DH,1) EDX:ECX, the IA32_XSS bits the CPU supports (docs/sdm/msrs.md §12). */
  readonly xssSupported: bigint;
}

/** The logical processor's state at the RDMSR/WRMSR. */
export interface ExecEnv {
  readonly cpl: number;
  readonly inVmxOperation: boolean;
}

/** The MSR values a write is checked against. */
export interface CurrentMsrs { readonly ctl: bigint }

const gp = (rule: GpRule, reason: string): GpFault => ({ rule, reason: `${rule}: ${reason}` });
const hex = (v: bigint): string => `0x${v.toString(16)}`;

/** LVT bits software may write: vector 7:0, delivery mode 10:8, mask 16 (docs/sdm/msrs.md §11.1; bit 12 is RO). */
const LVT_WRITABLE = bitRange(10, 0) | (1n << 16n);
/** LVT Delivery Status (bit 12): read-only, writes ignored. */
const LVT_DELIVERY_STATUS = 1n << 12n;
/** Defined bits of IA32_PERF_GLOBAL_STATUS_RESET/_SET in the model: 4 GP + 3 fixed counters, 55, 58–63. */
export const PERF_GLOBAL_BITS = bitRange(3, 0) | bitRange(34, 32) | (1n << 55n) | bitRange(63, 58);

/** Does this MSR exist on the CPU? Returns the G1/G2 fault, or no-such-msr. */
export function existenceFault(ctx: RuleCtx, msr: number): GpFault | undefined {
  const c = ctx.caps;
  if (isRtitMsr(msr)) {
    if (!c.intelPt) return gp('G1-no-pt', `Intel PT not supported (${cpuidBitName('intelPt')}=0)`);
    if (msr === MSR.IA32_RTIT_OUTPUT_BASE || msr === MSR.IA32_RTIT_OUTPUT_MASK_PTRS) {
      if (!c.topaOutput && !c.singleRangeOutput) {
        return gp('G2-not-enumerated', `neither ToPA nor single-range output (${cpuidBitName('topaOutput')}=0, ${cpuidBitName('singleRangeOutput')}=0)`);
      }
    }
    if (msr === MSR.IA32_RTIT_CR3_MATCH && !c.cr3Filtering) {
      return gp('G2-not-enumerated', `no CR3 filtering (${cpuidBitName('cr3Filtering')}=0)`);
    }
    const r = addrRangeOf(msr);
    if (r && !(c.ipFiltering && r.n < c.numAddressRanges)) {
      return gp('G2-not-enumerated', `address range ${r.n} not enumerated (IP filtering ${c.ipFiltering ? 1 : 0}, RANGECNT ${c.numAddressRanges})`);
    }
    return undefined;
  }
  switch (msr) {
    case MSR.IA32_PERF_GLOBAL_STATUS:
    case MSR.IA32_PERF_GLOBAL_STATUS_RESET:
      return ctx.perfmonVersion >= 2 ? undefined : gp('G2-not-enumerated', 'PerfMon version < 2 (CPUID.0AH:EAX[7:0])');
    case MSR.IA32_PERF_GLOBAL_STATUS_SET:
      return ctx.perfmonVersion > 3 ? undefined : gp('G2-not-enumerated', 'IA32_PERF_GLOBAL_STATUS_SET needs PerfMon version > 3 (CPUID.0AH:EAX[7:0])');
    case MSR.IA32_XSS:
      return c.xsaves ? undefined : gp('G2-not-enumerated', `no IA32_XSS (${cpuidBitName('xsaves')}=0)`);
    case MSR.IA32_X2APIC_LVT_PMI:
      return undefined;
    default:
      return gp('no-such-msr', `MSR 0x${msr.toString(16)} is not implemented`);
  }
}

/** RDMSR: #GP only under G1, G2 and G5 (docs/sdm/msrs.md §9, last line). */
export function rdmsrFault(ctx: RuleCtx, msr: number, env: ExecEnv): GpFault | undefined {
  if (env.cpl > 0) return gp('G5-cpl', `RDMSR at CPL ${env.cpl}`);
  return existenceFault(ctx, msr);
}

/** WRMSR: every #GP condition of docs/sdm/msrs.md §9 for `msr` := `value`, given the current CTL. */
export function wrmsrFault(ctx: RuleCtx, cur: CurrentMsrs, msr: number, value: bigint, env: ExecEnv): GpFault | undefined {
  if (env.cpl > 0) return gp('G5-cpl', `WRMSR at CPL ${env.cpl}`);
  const missing = existenceFault(ctx, msr);
  if (missing) return missing;
  if (value < 0n || value > MASK64) return gp('G2-not-enumerated', `value ${value} is not a 64-bit value`);
  const traceEn = (cur.ctl & 1n) === 1n;
  if (isRtitMsr(msr) && msr !== MSR.IA32_RTIT_CTL && traceEn) {
    return gp('G3-traceen-set', 'IA32_RTIT_CTL.TraceEn=1: only IA32_RTIT_CTL may be written');
  }
  switch (msr) {
    case MSR.IA32_RTIT_CTL: return ctlFault(ctx, cur.ctl, value, env);
    case MSR.IA32_RTIT_STATUS: return statusFault(ctx, value);
    case MSR.IA32_RTIT_OUTPUT_BASE: {
      if (bits(value, 6, 0) !== 0n) return gp('OUTPUT_BASE-low-bits', `bits 6:0 = ${hex(bits(value, 6, 0))} (must be 0)`);
      const above = value >> BigInt(ctx.caps.maxPhysAddr);
      if (above !== 0n) return gp('OUTPUT_BASE-maxphyaddr', `bits 63:${ctx.caps.maxPhysAddr} set (MAXPHYADDR ${ctx.caps.maxPhysAddr})`);
      return undefined;
    }
    case MSR.IA32_RTIT_OUTPUT_MASK_PTRS:
      return undefined; // no reserved bits: bits 6:0 are writes-ignored (docs/sdm/msrs.md §6)
    case MSR.IA32_RTIT_CR3_MATCH:
      if (!ctx.profile.quirks.has('KVM_CR3_MATCH_LAX') && bits(value, 4, 0) !== 0n) {
        return gp('CR3_MATCH-low-bits', `bits 4:0 = ${hex(bits(value, 4, 0))} (must be 0)`);
      }
      return undefined;
    case MSR.IA32_PERF_GLOBAL_STATUS:
      return gp('read-only-msr', 'IA32_PERF_GLOBAL_STATUS is read-only (clear through 0x390, set through 0x391)');
    case MSR.IA32_PERF_GLOBAL_STATUS_RESET:
    case MSR.IA32_PERF_GLOBAL_STATUS_SET:
      return (value & ~PERF_GLOBAL_BITS) !== 0n ? gp('PERF-reserved', `reserved bits ${hex(value & ~PERF_GLOBAL_BITS)}`) : undefined;
    case MSR.IA32_XSS:
      return (value & ~ctx.xssSupported) !== 0n
        ? gp('XSS-unsupported', `bits ${hex(value & ~ctx.xssSupported)} not enumerated in CPUID.(EAX=0DH,ECX=1):EDX:ECX`)
        : undefined;
    case MSR.IA32_X2APIC_LVT_PMI:
    {
      const rsvd = value & ~(LVT_WRITABLE | LVT_DELIVERY_STATUS);
      return rsvd !== 0n ? gp('LVT-reserved', `reserved bits ${hex(rsvd)}`) : undefined;
    }
  }
  const r = addrRangeOf(msr);
  if (r && !isCanonical(value, ctx.caps.maxLinearAddr)) {
    // Canonical for the maximum supported linear-address width (docs/sdm/msrs.md §8, Open Question 13).
    return gp('ADDR-noncanonical', `${hex(value)} is not canonical for ${ctx.caps.maxLinearAddr}-bit linear addresses`);
  }
  return undefined;
}

/** IA32_RTIT_CTL reserved bits for these capabilities (docs/sdm/msrs.md §3.1), written out bit by bit. */
export function ctlReservedMask(ctx: RuleCtx): bigint {
  const c = ctx.caps;
  // Always legal: TraceEn 0, OS 2, User 3, TSCEn 10, DisRETC 11, BranchEn 13 (§3.1 "Reserved mask").
  let legal = (1n << 0n) | (1n << 2n) | (1n << 3n) | (1n << 10n) | (1n << 11n) | (1n << 13n);
  if (c.psbCyc) legal |= (1n << 1n) | bitRange(22, 19) | bitRange(27, 24);
  if (c.powerEvents) legal |= 1n << 4n;
  if (c.ptwrite) legal |= (1n << 5n) | (1n << 12n);
  if (c.transportOutput) legal |= 1n << 6n;
  if (c.cr3Filtering) legal |= 1n << 7n;
  if (c.topaOutput) legal |= 1n << 8n;
  if (c.mtc) legal |= (1n << 9n) | bitRange(17, 14);
  const kvm = ctx.profile.quirks.has('KVM_CTL_BITMASK');
  if (c.eventTrace && !kvm) legal |= 1n << 31n;
  if (c.ipFiltering) for (let n = 0; n < Math.min(c.numAddressRanges, 4); n++) legal |= bitRange(35 + 4 * n, 32 + 4 * n);
  if (c.tntDisable && !kvm) legal |= 1n << 55n;
  if (c.pmiPreservation && !kvm) legal |= 1n << 56n;
  return MASK64 & ~legal;
}

/** docs/sdm/msrs.md §3.3 rules 2–9 and erratum BDM106 (docs/sdm/errata.md; rule 1 is G1, checked by the caller). */
function ctlFault(ctx: RuleCtx, c: bigint, v: bigint, env: ExecEnv): GpFault | undefined {
  const caps = ctx.caps;
  const q = ctx.profile.quirks;
  const rsvd = v & ctlReservedMask(ctx);
  if (rsvd !== 0n) return gp('CTL-2-reserved', `reserved or un-enumerated bits ${hex(rsvd)}`);
  const vTraceEn = (v & 1n) === 1n;
  if ((c & 1n) === 1n && vTraceEn && v !== c) {
    return gp('CTL-3-traceen-lock', 'TraceEn stays 1 and the value changes');
  }
  for (let n = 0; n < 4; n++) {
    const cfg = bits(v, 35 + 4 * n, 32 + 4 * n);
    if (cfg > 2n) return gp('CTL-4-addr-cfg', `ADDR${n}_CFG = ${cfg} (only 0, 1, 2 are defined)`);
  }
  if (caps.mtc) {
    const f = Number(bits(v, 17, 14));
    if (((caps.mtcPeriods >>> f) & 1) === 0) return gp('CTL-5-mtc-freq', `MTCFreq = ${f} not in ${cpuidBitName('mtcPeriods')}`);
  }
  if (caps.psbCyc) {
    const t = Number(bits(v, 22, 19));
    if (((caps.cycThresholds >>> t) & 1) === 0) return gp('CTL-6-cyc-thresh', `CycThresh = ${t} not in ${cpuidBitName('cycThresholds')}`);
    const p = Number(bits(v, 27, 24));
    if (((caps.psbPeriods >>> p) & 1) === 0) return gp('CTL-7-psb-freq', `PSBFreq = ${p} not in ${cpuidBitName('psbPeriods')}`);
  }
  const toPA = (v >> 8n) & 1n, fabricEn = (v >> 6n) & 1n;
  if (vTraceEn && toPA === 0n && fabricEn === 0n && !caps.singleRangeOutput) {
    return gp('CTL-8-no-single-range', `TraceEn=1 with ToPA=0 and FabricEn=0, but ${cpuidBitName('singleRangeOutput')}=0`);
  }
  if (env.inVmxOperation && q.has('KVM_VMX_CTL')) return gp('CTL-9-vmx', 'KVM: no IA32_RTIT_CTL write in VMX operation');
  if (env.inVmxOperation && vTraceEn && !ctx.profile.ptInVmx) {
    return gp('CTL-9-vmx', 'TraceEn=1 in VMX operation with IA32_VMX_MISC[14]=0');
  }
  // The erratum's applicability is the shared table's (the profile's errata); its rule is written here again.
  if (ctx.profile.errata.has('BDM106') && vTraceEn && ((v >> 13n) & 1n) === 0n) {
    return gp('BDM106-branchen', 'TraceEn=1 with BranchEn=0 (erratum BDM106)');
  }
  return undefined;
}

/** IA32_RTIT_STATUS value rules (docs/sdm/msrs.md §4). */
function statusFault(ctx: RuleCtx, v: bigint): GpFault | undefined {
  const pend = ctx.caps.pmiPreservation && !ctx.profile.quirks.has('KVM_STATUS_MASK');
  // Bit 3, 31:8 (31:6 without EBX[6]) and 63:49 are reserved.
  const rsvd = v & ((1n << 3n) | bitRange(31, pend ? 8 : 6) | bitRange(63, 49));
  if (rsvd !== 0n) return gp('STATUS-reserved', `reserved bits ${hex(rsvd)}`);
  if (!ctx.caps.psbCyc && bits(v, 48, 32) !== 0n) {
    return gp('STATUS-packetbytecnt', `PacketByteCnt != 0 but ${cpuidBitName('psbCyc')}=0`);
  }
  return undefined;
}
