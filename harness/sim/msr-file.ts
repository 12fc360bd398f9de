// The PT unit's MSR state with SDM semantics (docs/sdm/msrs.md): every
// IA32_RTIT_* MSR, IA32_PERF_GLOBAL_STATUS with _RESET/_SET, IA32_XSS and the
// x2APIC LVT PMI entry. Which access raises #GP is asked of the rule set the
// driver shares (driver/hw/msr-rules.ts), with this CPU's description and state;
// what a legal write does (read-only bits, the LVT's delivery status, TraceEn
// transitions, the output engine) is the model's own, here. Faults are data;
// a faulting write changes nothing (G6). The output engine and the
// packet generator attach through hooks, so the same MSR file runs over any PhysMemory.
import type { CpuFault } from '../../driver/hw/cpu-fault.js';
import { bits, bitRange } from '../../driver/hw/field.js';
import { decodePerfmon, type PtCaps } from '../../driver/hw/cpuid.js';
import { LVT_DELIVERY_STATUS, LVT_MASK, LVT_WRITABLE } from '../../driver/hw/lvt.js';
import { rdmsrFault, wrmsrFault, type MsrCpu, type MsrFault, type MsrRule } from '../../driver/hw/msr-rules.js';
import { capsOf, cpuidOf, type CpuProfile } from './profiles.js';
import { addrRangeOf, MSR } from './msr-addresses.js';

/** A CpuFault raised by the model, with the rule that fired (driver/hw/msr-rules.ts). */
export type SimFault = CpuFault & { readonly rule: MsrRule };

/** Where an RDMSR/WRMSR executes: its privilege level and whether the CPU is in VMX operation. */
export interface ExecEnv {
  readonly cpl: number;
  readonly inVmxOperation: boolean;
}

/** An RDMSR outcome: the value, or the #GP as data. */
export type MsrRead = { readonly ok: true; readonly value: bigint } | { readonly ok: false; readonly fault: SimFault };

/** The output engine as the MSR file sees it (docs/sdm/output.md §2, §4.1: internal pointers). */
export interface OutputPort {
  /** TraceEn 0→1 with TriggerEn=1: load the internal pointers from the MSRs. */
  enable(m: { readonly ctl: bigint; readonly outputBase: bigint; readonly maskPtrs: bigint }): void;
  /** TraceEn 1→0: flush and return the exact pointers, which the MSR file writes back. */
  disable(): { readonly outputBase: bigint; readonly maskPtrs: bigint };
}

/**
 * The packet generator as the MSR file sees it (docs/design.md "How the model runs"): told of every
 * TraceEn transition, whether by WRMSR, XRSTORS or XSAVES, and owner of the STATUS fields it
 * counts while tracing (docs/sdm/msrs.md §4: PacketByteCnt, PendPSB; Stopped by TraceStop).
 */
export interface TraceHooks {
  /** TraceEn 0→1, after TriggerEn was evaluated and the output engine loaded its pointers. */
  enabled(f: MsrFile): void;
  /** TraceEn 1→0, before the output engine is flushed: the last packets go out first. */
  disabling(f: MsrFile): void;
  /** STATUS as software reads it while TraceEn=1, and as written back at TraceEn 1→0. */
  status(base: bigint): bigint;
}

/** The processor context ContextEn/FilterEn are evaluated in (docs/sdm/README.md §2, §4.2). */
export interface TraceContext {
  readonly cpl: number;
  readonly cr3: bigint;
  /** PAE paging: CR3 matches on bits 63:5 instead of 63:12 (docs/sdm/README.md §3.2). */
  readonly pae: boolean;
  /** Next IP of the instruction that sets TraceEn. */
  readonly nextIp: bigint;
}

// STATUS bits (docs/sdm/msrs.md §4).
const FILTER_EN = 1n << 0n, CONTEXT_EN = 1n << 1n, TRIGGER_EN = 1n << 2n, ERROR = 1n << 4n, STOPPED = 1n << 5n;
const PEND_TOPA_PMI = 1n << 7n;
const INJECT_PSB_PMI_ON_ENABLE = 1n << 56n;
/** IA32_PERF_GLOBAL_STATUS[55] Trace_ToPA_PMI (docs/sdm/msrs.md §11). */
export const TRACE_TOPA_PMI = 1n << 55n;
/** OUTPUT_MASK_PTRS bits 6:0 always read 1 (docs/sdm/msrs.md §6). */
export const LOWER_MASK = 0x7fn;
/** LVT PMI reset value: masked (docs/sdm/msrs.md §11.1). */
export const LVT_RESET = LVT_MASK;

/** The per-logical-processor MSR file of the PT unit. */
export class MsrFile {
  readonly profile: CpuProfile;
  readonly caps: PtCaps;
  /** This CPU as the #GP rules see it: CPUID, PerfMon, IA32_XSS bits, errata, KVM quirks, IA32_VMX_MISC[14]. */
  readonly rulesCpu: MsrCpu;
  ctl = 0n;
  status = 0n;
  outputBase = 0n;
  maskPtrs = LOWER_MASK;
  cr3Match = 0n;
  readonly addrA: bigint[] = [0n, 0n, 0n, 0n];
  readonly addrB: bigint[] = [0n, 0n, 0n, 0n];
  globalStatus = 0n;
  xss = 0n;
  lvtPmi = LVT_RESET;
  /** Where RDMSR/WRMSR execute: CPL 0 outside VMX operation unless a test says otherwise. */
  env: ExecEnv = { cpl: 0, inVmxOperation: false };
  context: TraceContext = { cpl: 0, cr3: 0n, pae: false, nextIp: 0n };
  output: OutputPort | undefined;
  /** The packet generator, when one is attached (the sim target attaches one per CPU). */
  trace: TraceHooks | undefined;
  /** Called for every ToPA PMI the LVT delivers (the CPU masked the LVT entry first). */
  onPmi: (() => void) | undefined;
  /** PMIs delivered through the LVT, and PMIs raised while it was masked (not delivered). */
  deliveredPmis = 0;
  maskedPmis = 0;
  private outputLatched = false;

  constructor(profile: CpuProfile) {
    this.profile = profile;
    this.caps = capsOf(profile);
    const x1 = cpuidOf(profile, 0xd, 1);
    this.rulesCpu = {
      caps: this.caps,
      perfmon: decodePerfmon((l, sl) => cpuidOf(profile, l, sl)),
      xssBits: this.caps.xsaves ? (BigInt(x1.edx >>> 0) << 32n) | BigInt(x1.ecx >>> 0) : 0n,
      errata: profile.errata,
      quirks: profile.quirks,
      ptInVmx: profile.ptInVmx,
    };
  }

  get traceEn(): boolean { return (this.ctl & 1n) === 1n; }
  get triggerEn(): boolean { return (this.status & TRIGGER_EN) !== 0n; }

  /** RDMSR with the #GP rules (docs/sdm/msrs.md §9: G1, G2, G5 only). */
  read(msr: number): MsrRead {
    const f = rdmsrFault(this.rulesCpu, { ctl: this.ctl, ...this.env }, msr);
    if (f) return { ok: false, fault: simFault(f) };
    return { ok: true, value: this.peek(msr) };
  }

  /** WRMSR with every #GP rule; returns the fault, or undefined once the write took effect. */
  write(msr: number, value: bigint): SimFault | undefined {
    const f = wrmsrFault(this.rulesCpu, { ctl: this.ctl, ...this.env }, msr, value);
    if (f) return simFault(f);
    this.store(msr, value);
    return undefined;
  }

  /** The #GP a WRMSR would raise with TraceEn assumed 0 and CTL assumed `ctl` (XRSTORS checks). */
  checkWrite(msr: number, value: bigint, assumedCtl = 0n): SimFault | undefined {
    const f = wrmsrFault(this.rulesCpu, { ctl: assumedCtl, ...this.env }, msr, value);
    return f ? simFault(f) : undefined;
  }

  /** The value RDMSR returns, without checks (the MSR must exist). */
  peek(msr: number): bigint {
    switch (msr) {
      case MSR.IA32_RTIT_CTL: return this.ctl;
      case MSR.IA32_RTIT_STATUS: return this.trace && this.traceEn ? this.trace.status(this.status) : this.status;
      case MSR.IA32_RTIT_OUTPUT_BASE: return this.outputBase;
      case MSR.IA32_RTIT_OUTPUT_MASK_PTRS: return this.maskPtrs | LOWER_MASK;
      case MSR.IA32_RTIT_CR3_MATCH: return this.cr3Match;
      case MSR.IA32_PERF_GLOBAL_STATUS: return this.globalStatus;
      // Write-only command registers: the model reads them as 0 (not stated in docs/sdm/msrs.md §11).
      case MSR.IA32_PERF_GLOBAL_STATUS_RESET:
      case MSR.IA32_PERF_GLOBAL_STATUS_SET: return 0n;
      case MSR.IA32_XSS: return this.xss;
      case MSR.IA32_X2APIC_LVT_PMI: return this.lvtPmi;
    }
    const r = addrRangeOf(msr);
    if (r) return (r.side === 'A' ? this.addrA : this.addrB)[r.n]!;
    return 0n;
  }

  /** Applies an already-checked WRMSR, with its side effects (docs/sdm/msrs.md §3.4, §4, §6, §11). */
  store(msr: number, value: bigint): void {
    switch (msr) {
      case MSR.IA32_RTIT_CTL: return this.writeCtl(value);
      // STATUS bits 0–2 are read-only: writes ignored (docs/sdm/msrs.md §4).
      case MSR.IA32_RTIT_STATUS: this.status = (value & ~bitRange(2, 0)) | (this.status & bitRange(2, 0)); return;
      case MSR.IA32_RTIT_OUTPUT_BASE: this.outputBase = value; return;
      case MSR.IA32_RTIT_OUTPUT_MASK_PTRS: this.maskPtrs = value | LOWER_MASK; return;
      case MSR.IA32_RTIT_CR3_MATCH: this.cr3Match = value; return;
      case MSR.IA32_PERF_GLOBAL_STATUS_RESET: this.globalStatus &= ~value; return; // write 1 to clear
      case MSR.IA32_PERF_GLOBAL_STATUS_SET: this.globalStatus |= value; return;    // write 1 to set
      case MSR.IA32_XSS: this.xss = value; return;
      case MSR.IA32_X2APIC_LVT_PMI: this.lvtPmi = (value & LVT_WRITABLE) | (this.lvtPmi & LVT_DELIVERY_STATUS); return;
    }
    const r = addrRangeOf(msr);
    if (r) (r.side === 'A' ? this.addrA : this.addrB)[r.n] = value;
  }

  /** IA32_RTIT_CTL := v with the TraceEn transitions of docs/sdm/msrs.md §3.4. */
  private writeCtl(v: bigint): void {
    const old = this.ctl;
    this.ctl = v;
    if (old === v) return;
    const was = (old & 1n) === 1n, now = (v & 1n) === 1n;
    if (!was && now) this.traceEnabled();
    else if (was && !now) this.traceDisabled();
  }

  /** TraceEn 0→1: TriggerEn := !Stopped && !Error; if set, evaluate the enables and start the output. */
  private traceEnabled(): void {
    const trigger = (this.status & (STOPPED | ERROR)) === 0n;
    if (!trigger) { this.status &= ~TRIGGER_EN; this.trace?.enabled(this); return; }
    this.status |= TRIGGER_EN;
    this.status = setBit(this.status, CONTEXT_EN, this.contextEn());
    // FilterEn exists only with IP filtering; without it bit 0 is "reserved, writes ignored" (docs/sdm/msrs.md §4).
    if (this.caps.ipFiltering) this.status = setBit(this.status, FILTER_EN, this.filterEn());
    if (this.output) { this.output.enable({ ctl: this.ctl, outputBase: this.outputBase, maskPtrs: this.maskPtrs | LOWER_MASK }); this.outputLatched = true; }
    this.trace?.enabled(this);
    // PMI preservation: a pended ToPA PMI is raised again at enable (docs/sdm/output.md §7.4 step 3).
    if ((this.ctl & INJECT_PSB_PMI_ON_ENABLE) !== 0n && (this.status & PEND_TOPA_PMI) !== 0n) this.signalTopaPmi();
  }

  /** TraceEn 1→0: flush, write the output pointers back, TriggerEn := 0 (ContextEn/FilterEn keep their values). */
  private traceDisabled(): void {
    this.trace?.disabling(this);
    if (this.output && this.outputLatched) {
      const p = this.output.disable();
      this.outputBase = p.outputBase;
      this.maskPtrs = p.maskPtrs | LOWER_MASK;
    }
    this.outputLatched = false;
    if (this.trace) this.status = this.trace.status(this.status);
    this.status &= ~TRIGGER_EN;
  }

  /** ContextEn formula of docs/sdm/README.md §2 (no SGX enclaves in the model). */
  private contextEn(): boolean {
    const c = this.context;
    const os = (this.ctl >> 2n) & 1n, user = (this.ctl >> 3n) & 1n, cr3Filter = (this.ctl >> 7n) & 1n;
    if (os === 0n && c.cpl === 0) return false;
    if (user === 0n && c.cpl > 0) return false;
    const lo = c.pae ? 5n : 12n;
    if (cr3Filter === 1n && (c.cr3 >> lo) !== (this.cr3Match >> lo)) return false;
    return true;
  }

  /** FilterEn at enable: 1 when no range has ADDRn_CFG=1, else whether Next IP lies in one (docs/sdm/README.md §4.1). */
  private filterEn(): boolean {
    let any = false;
    for (let n = 0; n < Math.min(this.caps.numAddressRanges, 4); n++) {
      if (bits(this.ctl, 35 + 4 * n, 32 + 4 * n) !== 1n) continue;
      any = true;
      const a = this.addrA[n]!, b = this.addrB[n]!;
      if (this.context.nextIp >= a && this.context.nextIp <= b) return true;
    }
    return !any;
  }

  /** Operational error (docs/sdm/output.md §6): STATUS.Error := 1, TriggerEn := 0. */
  operationalError(): void {
    this.status = (this.status | ERROR) & ~TRIGGER_EN;
  }

  /** ToPA STOP (docs/sdm/output.md §4.4): STATUS.Stopped := 1, TriggerEn := 0. */
  topaStop(): void {
    this.status = (this.status | STOPPED) & ~TRIGGER_EN;
  }

  /** A region with INT=1 filled (docs/sdm/output.md §7.4 step 1): PendTopaPMI if preserving, then the PMI. */
  topaIntFilled(): void {
    this.markPendTopaPmi();
    this.signalTopaPmi();
  }

  /** STATUS.PendTopaPMI := 1 when CTL.InjectPsbPmiOnEnable=1 (docs/sdm/output.md §7.4 step 1). */
  markPendTopaPmi(): void {
    if ((this.ctl & INJECT_PSB_PMI_ON_ENABLE) !== 0n) this.status |= PEND_TOPA_PMI;
  }

  /** GLOBAL_STATUS[55] := 1, then delivery through the LVT entry, which the CPU masks (docs/sdm/msrs.md §11, §11.1). */
  signalTopaPmi(): void {
    this.globalStatus |= TRACE_TOPA_PMI;
    if ((this.lvtPmi & LVT_MASK) !== 0n) { this.maskedPmis++; return; } // model: a masked PMI is not delivered
    this.lvtPmi |= LVT_MASK;
    this.deliveredPmis++;
    this.onPmi?.();
  }

  /** Unmask the LVT performance-monitor entry (what a handler does before returning). */
  unmaskPmi(): void {
    this.lvtPmi &= ~LVT_MASK;
  }

  /** VMXON: with IA32_VMX_MISC[14]=0 it clears TraceEn (docs/sdm/msrs.md §10, §13). */
  vmxon(): void {
    this.env = { ...this.env, inVmxOperation: true };
    if (!this.profile.ptInVmx && this.traceEn) this.writeCtl(this.ctl & ~1n);
  }

  vmxoff(): void {
    this.env = { ...this.env, inVmxOperation: false };
  }

  /** Warm reset (docs/sdm/msrs.md §10): only TraceEn is cleared with IP filtering (EBX[2]=1), else every RTIT MSR. */
  warmReset(): void {
    if (this.traceEn) this.writeCtl(this.ctl & ~1n);
    if (!this.caps.ipFiltering) this.clearRtit();
  }

  /** Cold reset: every MSR takes its reset value (docs/sdm/msrs.md §1, §10, §11.1). */
  coldReset(): void {
    if (this.traceEn) this.trace?.disabling(this);
    this.output?.disable();
    this.outputLatched = false;
    this.clearRtit();
    this.globalStatus = 0n;
    this.xss = 0n;
    this.lvtPmi = LVT_RESET;
  }

  private clearRtit(): void {
    this.ctl = 0n; this.status = 0n; this.outputBase = 0n; this.maskPtrs = LOWER_MASK; this.cr3Match = 0n;
    this.addrA.fill(0n); this.addrB.fill(0n);
  }
}

function setBit(v: bigint, bit: bigint, on: boolean): bigint {
  return on ? v | bit : v & ~bit;
}

function simFault(f: MsrFault): SimFault {
  return f.value === undefined
    ? { vector: '#GP', op: f.op, msr: f.msr, reason: f.reason, rule: f.rule }
    : { vector: '#GP', op: f.op, msr: f.msr, value: f.value, reason: f.reason, rule: f.rule };
}
