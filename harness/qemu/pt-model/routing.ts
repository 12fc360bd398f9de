// Which MSR accesses the model answers under `--pt model` (issue 5 item 6): the PT unit's own
// MSRs — every IA32_RTIT_* address (docs/sdm/msrs.md §2, G1), IA32_PERF_GLOBAL_STATUS with _RESET
// and _SET (§11), IA32_XSS (§12) and the x2APIC LVT performance-monitor entry (§11.1). Every
// other MSR is the guest's, reached through the helper as without the model.
import type { MsrOp, MsrResult } from '../../../driver/target.js';
import { isRtitMsr, MSR } from '../../sim/msr-addresses.js';

const MODEL_NON_RTIT: ReadonlySet<number> = new Set([
  MSR.IA32_PERF_GLOBAL_STATUS, MSR.IA32_PERF_GLOBAL_STATUS_RESET, MSR.IA32_PERF_GLOBAL_STATUS_SET,
  MSR.IA32_XSS, MSR.IA32_X2APIC_LVT_PMI,
]);

/** True when the model, not the guest, owns `msr`. */
export function isModelMsr(msr: number): boolean {
  return isRtitMsr(msr) || MODEL_NON_RTIT.has(msr);
}

/** Consecutive ops of a batch with one owner. */
export interface BatchRun {
  readonly owner: 'model' | 'guest';
  readonly ops: readonly MsrOp[];
}

/** Splits a batch into runs of consecutive ops with the same owner, in order. */
export function splitBatch(ops: readonly MsrOp[]): BatchRun[] {
  const runs: { owner: 'model' | 'guest'; ops: MsrOp[] }[] = [];
  for (const o of ops) {
    const owner = isModelMsr(o.msr) ? 'model' : 'guest';
    const last = runs[runs.length - 1];
    if (last?.owner === owner) last.ops.push(o);
    else runs.push({ owner, ops: [o] });
  }
  return runs;
}

/**
 * Executes a batch run by run, the model's ops with `model`, the guest's with `guest` (one
 * round trip per run); stops at the first #GP, which is the last result (driver/target.ts).
 */
export async function routedBatch(
  ops: readonly MsrOp[],
  model: (o: MsrOp) => MsrResult,
  guest: (ops: readonly MsrOp[]) => Promise<MsrResult[]>,
): Promise<MsrResult[]> {
  const out: MsrResult[] = [];
  for (const run of splitBatch(ops)) {
    const res = run.owner === 'model' ? modelRun(run.ops, model) : await guest(run.ops);
    out.push(...res);
    if (res.some((r) => !r.ok)) break;
  }
  return out;
}

function modelRun(ops: readonly MsrOp[], model: (o: MsrOp) => MsrResult): MsrResult[] {
  const out: MsrResult[] = [];
  for (const o of ops) {
    const r = model(o);
    out.push(r);
    if (!r.ok) break;
  }
  return out;
}
