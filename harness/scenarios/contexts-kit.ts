// What the several-context scenarios share: a second workload at its own address, the way the CPU
// can switch PT state, and the common run of two contexts that grow their tables.
import { traceContexts, type ContextResult } from '../../driver/contexts.js';
import type { TraceRequest } from '../../driver/request.js';
import type { Target } from '../../driver/target.js';
import type { GeneratedWorkload } from '../sim/workload/index.js';
import { seededWorkload, type ScenarioContext } from './context.js';
import { topa } from './helpers.js';

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
  ctx: ScenarioContext, target: Target, a: GeneratedWorkload, b: GeneratedWorkload, extra: Omit<TraceRequest, 'output'>, sliceBranches: number,
): Promise<[ContextResult, ContextResult]> {
  const sim = ctx.sim!;
  const results = await traceContexts(target, [
    { name: 'A', workload: a, req: topa('grow', 3, extra) }, { name: 'B', workload: b, req: topa('grow', 3, extra) },
  ], { sliceBranches, ...ctx.sessionOptions(), writtenNow: () => sim.written(0) });
  ctx.result = results[0];
  return results as [ContextResult, ContextResult];
}
