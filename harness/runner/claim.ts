// A run on a real target claims its CPU instead of scrubbing it (docs/design.md "Ownership"):
// when IA32_RTIT_CTL.TraceEn is already 1 there, someone else traces — perf's intel_pt, another
// tool, a run that crashed — and the CPU is not ptlab's. It refuses, naming the CPU and what to do,
// as Linux's pt_init refuses when it finds TraceEn=1 at boot. Taking the CPU back is an explicit
// option (`--reclaim`), which clears TraceEn and STATUS and says so; it is never the default.
import { PtBusyError } from '../../driver/base/errors.js';
import { traceEnOf } from '../../driver/ctl.js';
import {
  IA32_RTIT_ADDR_A, IA32_RTIT_ADDR_B, IA32_RTIT_CR3_MATCH, IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS, IA32_RTIT_STATUS,
} from '../../driver/hw/msrs.js';
import type { CallOpts, Target } from '../../driver/target.js';

/** How to claim. */
export interface ClaimOptions extends CallOpts {
  /** Take the CPU back from whoever traces on it (their trace is lost). Default false. */
  readonly reclaim?: boolean;
}

/** What `--reclaim` did: a note for stderr and the transcript, and how to give the CPU back. */
export interface Reclaimed {
  readonly note: string;
  /**
   * After the run: the other tracer's output and filter MSRs written back, with TraceEn left 0. A
   * tracer that caches them and writes only what changed (Linux perf's pt_config_buffer and
   * pt_config_filters) would otherwise re-enable onto ptlab's freed table.
   */
  restore(): Promise<void>;
}

/** The refusal `ptlab run` prints: the driver's words plus the option that takes the CPU back. */
export class CpuClaimedError extends PtBusyError {
  override readonly name = 'CpuClaimedError';
  readonly hint = 'run again with --reclaim to take the CPU back (the other tracer\'s trace is lost), or stop that tracer first';
}

/** The MSRs a tracer programs besides CTL and STATUS, which a reclaim gives back. */
const KEPT = [IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS, IA32_RTIT_CR3_MATCH, ...IA32_RTIT_ADDR_A.flatMap((a, n) => [a, IA32_RTIT_ADDR_B[n]!])];

/**
 * Claims `cpu` of `t` for a run: resolves with nothing when TraceEn=0; throws CpuClaimedError when
 * someone else traces there; with `reclaim`, keeps the other tracer's output and filter MSRs,
 * writes TraceEn=0 and STATUS=0, and resolves with what it did. A CPU without PT (its CTL read
 * faults) is left to the run to report.
 */
export async function claimCpu(t: Target, cpu: number, o: ClaimOptions = {}): Promise<Reclaimed | undefined> {
  const opts = o.signal ? { signal: o.signal } : {};
  const [r] = await t.msrBatch(cpu, [{ op: 'rdmsr', msr: IA32_RTIT_CTL.address }], opts);
  if (!r?.ok || !traceEnOf(r.value)) return undefined;
  if (!o.reclaim) throw new CpuClaimedError(cpu, r.value, t.description);
  // One read each: an MSR this CPU lacks (ADDRn beyond its ranges) faults alone.
  const kept: { msr: number; value: bigint }[] = [];
  for (const m of KEPT) {
    const [v] = await t.msrBatch(cpu, [{ op: 'rdmsr', msr: m.address }], opts);
    if (v?.ok) kept.push({ msr: m.address, value: v.value });
  }
  await t.msrBatch(cpu, [
    { op: 'wrmsr', msr: IA32_RTIT_CTL.address, value: r.value & ~1n },
    { op: 'wrmsr', msr: IA32_RTIT_STATUS.address, value: 0n },
  ], opts);
  return {
    note: `--reclaim: CPU ${cpu} of ${t.description} was traced by someone else (IA32_RTIT_CTL=0x${r.value.toString(16)}); took it back: TraceEn=0, STATUS=0 (their trace is lost); their output and filter MSRs go back after the run`,
    restore: async () => {
      await t.msrBatch(cpu, kept.map((k) => ({ op: 'wrmsr' as const, msr: k.msr, value: k.value })), opts);
    },
  };
}
