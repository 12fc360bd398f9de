// Where the CPU's output pointer was, from the transcript: every IA32_RTIT_OUTPUT_MASK_PTRS value
// the driver read, wrote, saved (XSAVES) or restored (XRSTORS), with the table (or single range)
// it points into: IA32_RTIT_OUTPUT_BASE as last seen on that CPU (docs/sdm/msrs.md §5, §6). The
// ToPA meaning (entry index, offset in its region) holds when IA32_RTIT_CTL.ToPA was set.
import { IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS } from '../../../driver/hw/msrs.js';
import { areaField, hexField, strField, type TLine } from './transcript-lines.js';


/** One pointer value and what it points into. */
export interface PointerSample {
  readonly t: number;
  readonly line: number;
  readonly cpu: number;
  /** The ToPA table (or the single range's base). */
  readonly table: bigint;
  readonly mode: 'topa' | 'single';
  /** MaskOrTableOffset: the current entry (ToPA). */
  readonly index: number;
  /** OutputOffset: the next byte's offset in the current region (or the range). */
  readonly offset: number;
  /** `read`: the CPU's pointer as the driver found it (rdmsr, xsaves); `write`: the driver set it (wrmsr, xrstors). */
  readonly how: 'read' | 'write';
}

const MSR = {
  ctl: `0x${IA32_RTIT_CTL.address.toString(16)}`,
  base: `0x${IA32_RTIT_OUTPUT_BASE.address.toString(16)}`,
  ptrs: `0x${IA32_RTIT_OUTPUT_MASK_PTRS.address.toString(16)}`,
};

/** Follows OUTPUT_BASE and CTL.ToPA per CPU and turns pointer values into samples. */
export class PointerTracker {
  private readonly base = new Map<number, bigint>();
  private readonly topa = new Map<number, boolean>();
  /** Tracing stopped by the driver (its last CTL write cleared TraceEn): reads now are a handler's or the final stop's. */
  private readonly stopped = new Map<number, boolean>();

  /** Whether the driver's last write of IA32_RTIT_CTL on `cpu` cleared TraceEn (and no context switch came since). */
  isStopped(cpu: number): boolean {
    return this.stopped.get(cpu) ?? false;
  }

  /** Tracing on `cpu` was stopped by someone other than the driver (a platform's PMI top half). */
  markStopped(cpu: number): void {
    this.stopped.set(cpu, true);
  }

  /** Applies one line; returns the pointer sample it holds, if any. A faulting access changed nothing. */
  apply(l: TLine): PointerSample | undefined {
    if (l.f.fault !== undefined) return undefined;
    const cpu = l.cpu;
    if (l.op === 'rdmsr' || l.op === 'wrmsr') {
      const v = hexField(l, l.op === 'rdmsr' ? 'result' : 'value'), msr = strField(l, 'msr');
      if (v === undefined) return undefined;
      if (msr === MSR.ctl) {
        const ctl = IA32_RTIT_CTL.decode(v);
        this.topa.set(cpu, ctl.ToPA);
        if (l.op === 'wrmsr') this.stopped.set(cpu, !ctl.TraceEn);
      } else if (msr === MSR.base) {
        this.base.set(cpu, IA32_RTIT_OUTPUT_BASE.decode(v).BasePhysAddr);
      } else if (msr === MSR.ptrs) {
        return this.sample(l, v, l.op === 'rdmsr' ? 'read' : 'write');
      }
      return undefined;
    }
    if (l.op === 'xsaves' || l.op === 'xrstors') {
      const base = areaField(l, 'IA32_RTIT_OUTPUT_BASE'), ctl = areaField(l, 'IA32_RTIT_CTL'), ptrs = areaField(l, 'IA32_RTIT_OUTPUT_MASK_PTRS');
      this.stopped.set(cpu, false);
      if (base === undefined || ptrs === undefined) return undefined;
      const saved = { base: IA32_RTIT_OUTPUT_BASE.decode(base).BasePhysAddr, topa: ctl === undefined ? true : IA32_RTIT_CTL.decode(ctl).ToPA };
      // XSAVES reports the saved context's pointer; XRSTORS makes the restored one the CPU's.
      if (l.op === 'xrstors') {
        this.base.set(cpu, saved.base);
        this.topa.set(cpu, saved.topa);
        return this.sample(l, ptrs, 'write');
      }
      return this.make(l, ptrs, saved.base, saved.topa, 'read');
    }
    return undefined;
  }

  private sample(l: TLine, v: bigint, how: PointerSample['how']): PointerSample | undefined {
    const table = this.base.get(l.cpu);
    return table === undefined ? undefined : this.make(l, v, table, this.topa.get(l.cpu) ?? true, how);
  }

  private make(l: TLine, v: bigint, table: bigint, topa: boolean, how: PointerSample['how']): PointerSample {
    const d = IA32_RTIT_OUTPUT_MASK_PTRS.decode(v);
    return { t: l.t, line: l.n, cpu: l.cpu, table, mode: topa ? 'topa' : 'single', index: topa ? d.MaskOrTableOffset : 0, offset: d.OutputOffset, how };
  }
}
