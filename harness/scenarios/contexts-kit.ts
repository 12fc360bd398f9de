// What the several-context scenarios share: a second workload at its own address, the way the CPU
// can switch PT state, the common run of two contexts that grow their tables, and the checks on
// whose PMI each one was.
import { traceContexts, type ContextResult } from '../../driver/contexts.js';
import { IA32_PERF_GLOBAL_STATUS } from '../../driver/hw/msrs.js';
import type { TraceOptions } from '../../driver/request.js';
import type { Target } from '../../driver/target.js';
import type { GeneratedWorkload } from '../sim/workload/index.js';
import { seededWorkload, type ScenarioContext } from './context.js';
import { linesOf, topa } from './helpers.js';

/** Where a second context's workload lives: clear of the first (0x10000000) and below 2^31. */
export const SECOND_BASE = 0x2000_0000n;

/** Context B's workload: its own seed (derived from the run's) at SECOND_BASE. */
export function secondWorkload(ctx: ScenarioContext, minBranches: number): GeneratedWorkload {
  return seededWorkload((ctx.env.seed * 7 + 3) >>> 0, { base: SECOND_BASE, minBranches });
}

/** XSAVES/XRSTORS where the CPU can save PT state (docs/sdm/xsave.md §1), RDMSR/WRMSR otherwise. */
export function switchingOf(ctx: ScenarioContext): 'xsaves' | 'manual' {
  return ctx.env.caps.xsaves && ctx.env.caps.xssPtState ? 'xsaves' : 'manual';
}

/** A and B on one CPU of `target`, each growing its own table (3 regions of 4 KiB a batch), metered on the sim. */
export async function growPair(
  ctx: ScenarioContext, target: Target, a: GeneratedWorkload, b: GeneratedWorkload, extra: TraceOptions, sliceBranches: number,
): Promise<[ContextResult, ContextResult]> {
  const sim = ctx.sim!;
  const results = await traceContexts(target, [
    { name: 'A', workload: a, req: topa('grow', 3, extra) }, { name: 'B', workload: b, req: topa('grow', 3, extra) },
  ], { sliceBranches, ...ctx.sessionOptions(), writtenNow: () => sim.written(0) });
  ctx.result = results[0];
  return results as [ContextResult, ContextResult];
}

/**
 * The transcript's PMIs, from line `from` on, that arrived with GLOBAL_STATUS[55] already clear: one
 * in flight when a handler or a final stop acknowledged [55] still arrives (an interrupt is not
 * recalled), and must be left alone as not a ToPA PMI.
 */
export function pmisWithoutTopaBit(ctx: ScenarioContext, from: number): number {
  return linesOf(ctx.target.lines.slice(from), 'pmi').filter((l) => !IA32_PERF_GLOBAL_STATUS.decode(BigInt(l.value ?? '0')).Trace_ToPA_PMI).length;
}

/**
 * A context traced with grow, 3 regions of 4 KiB a batch, INT on the second: the n-th INT region is
 * full after (3n − 1) regions of output, so the table grew once per INT region its output filled,
 * never before. A PMI taken for the wrong context shows here: the context whose PMI was swallowed
 * grows too seldom (and stops at its guard STOP), the one that took another's grows too early.
 */
export function expectGrowRefills(ctx: ScenarioContext, r: ContextResult, label?: string): void {
  const name = `${label ? `${label}: ` : ''}context ${r.name}`;
  const region = 4096, bytes = r.ledger.written ?? r.ledger.collected;
  const due = Math.floor((bytes / region + 1) / 3), refillsAt = r.pmis.filter((p) => p.branch !== undefined).map((p) => p.at);
  ctx.expect(`${name}: its table grew once per INT region its output filled`, refillsAt.length <= due && refillsAt.length >= due - 1,
    `${refillsAt.length} refills; ${bytes} bytes fill ${due} INT regions`);
  // A refill before byte (3n − 1) × 4 KiB (a region taken for filled too early) grows the table for output that is not there.
  const early = refillsAt.findIndex((at, i) => at < (3 * (i + 1) - 1) * region);
  ctx.expect(`${name}: each refill came after the INT region it serves was full`, early < 0,
    early < 0 ? `refills at ${refillsAt.join(', ')}` : `refill ${early + 1} at byte ${refillsAt[early]}, before byte ${(3 * (early + 1) - 1) * region}`);
}
