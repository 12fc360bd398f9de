// What the several-context scenarios share: a second workload at its own address, the way the CPU
// can switch PT state, the common run of two contexts that grow their tables, and the checks on
// whose PMI each one was.
import { traceContexts, type ContextResult } from '../../../driver/contexts.js';
import { IA32_PERF_GLOBAL_STATUS, IA32_RTIT_CTL } from '../../../driver/hw/msrs.js';
import type { PmiRecord } from '../../../driver/pmi/handler.js';
import type { TraceOptions } from '../../../driver/request.js';
import type { Target, TargetEvent } from '../../../driver/target.js';
import type { GeneratedWorkload } from '../../sim/workload/index.js';
import { seededWorkload, type ScenarioContext } from './context.js';
import { everyPmiHandled, linesOf, topa } from './helpers.js';

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

/** A context's PMIs as the handler took them, for expectation details: `handled-saved(S),handled,…` (S: stopped). */
export function pmiActions(r: ContextResult): string {
  return r.pmis.map((p) => `${p.action}${p.merged ? '(M)' : ''}${p.stopped ? '(S)' : ''}`).join(',');
}

/**
 * Counts the PMIs that reach the driver with GLOBAL_STATUS[55] clear (`onPmi` sees each PMI as the
 * driver gets it: pass it to interruptsOffWhile), so a run can check each was left alone.
 */
export function topaBitClearCounter(): { readonly onPmi: (ev: Extract<TargetEvent, { kind: 'pmi' }>) => void; readonly count: () => number } {
  let clear = 0;
  return {
    onPmi: (ev) => { if (!IA32_PERF_GLOBAL_STATUS.decode(ev.globalStatus).Trace_ToPA_PMI) clear++; },
    count: () => clear,
  };
}

/** Exactly the `clear` PMIs that arrived with GLOBAL_STATUS[55] clear were left alone as not ToPA PMIs, and every ToPA PMI of each context was handled. */
export function expectPmisSorted(ctx: ScenarioContext, label: string, results: readonly ContextResult[], clear: number): void {
  const notTopa = results.reduce((n, r) => n + r.pmis.filter((p) => p.action === 'not-topa').length, 0);
  ctx.expectEqual(`${label}: exactly the PMIs that arrived with GLOBAL_STATUS[55] already clear were left alone as not ToPA PMIs`, notTopa, clear);
  for (const r of results) {
    ctx.expect(`${label}: context ${r.name}: every ToPA PMI was handled`, everyPmiHandled(r.pmis.filter((p) => p.action !== 'not-topa')), pmiActions(r));
  }
}

/**
 * After each stop a handler cleared, `r` traced on: output follows it (Stopped cleared and the
 * pointer moved on in the image the next restore loaded: docs/sdm/output.md §4.4), and no stop
 * was found twice at one place. Returns the handled stops.
 */
export function expectTracedOnAfterStops(ctx: ScenarioContext, label: string, r: ContextResult): PmiRecord[] {
  const handledStops = r.pmis.filter((p) => p.action !== 'final-stop' && p.stopped);
  const ats = handledStops.map((p) => p.at);
  const stuck = ats.filter((at, i) => at >= r.stream.length || (i > 0 && at <= ats[i - 1]!));
  ctx.expect(`${label}: ${r.name} traced on after every stop a handler cleared (output follows each; no stop found twice at one place)`, stuck.length === 0,
    `${ats.length} stops cleared, at ${ats.join(', ') || '-'}; ${r.stream.length} bytes collected`);
  return handledStops;
}

/** The end of a two-context run: both took turns, tracing is off, and every buffer and table allocated since transcript line `from` was freed. */
export async function expectContextsEnded(ctx: ScenarioContext, label: string, results: readonly ContextResult[], from: number): Promise<void> {
  const [ra, rb] = results as [ContextResult, ContextResult];
  ctx.expect(`${label}: the contexts took turns, each switched out and in`, ra.switches >= 3 && rb.switches >= 3, `${ra.switches} and ${rb.switches} switches`);
  ctx.expectEqual(`${label}: tracing is off at the end`, IA32_RTIT_CTL.decode(await ctx.target.rdmsr(0, IA32_RTIT_CTL.address)).TraceEn, false);
  const lines = ctx.target.lines.slice(from);
  ctx.expectEqual(`${label}: every buffer and table the driver allocated was freed`, linesOf(lines, 'alloc').length, linesOf(lines, 'free').length);
}
