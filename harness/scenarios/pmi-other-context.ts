// xsaves-pmi-other-context and manual-pmi-other-context: the SDM's motivating
// case for the ToPA PMI across a context switch (docs/sdm/output.md §7.3–§7.4,
// docs/sdm/xsave.md §2–§5). Three software contexts share one CPU, each with its own
// workload (at its own address) and its own ToPA output; the driver switches
// between them every few dozen branches, with XSAVES/XRSTORS where the CPU can
// save PT state, or by hand with RDMSR/WRMSR (CTL first on save, last on
// restore); a short third context exits first, and the round robin must go on
// between the other two. A ToPA PMI whose INT region filled just before a
// switch is delivered after the save, while another context is loaded and tracing.
// Without PMI preservation the handler must service the switched-out context
// on its saved image and its tables in memory, never the MSRs (which hold the
// other context's state). Each context's trace must then be whole, lossless,
// and hold only its own workload's flow. The manual variant runs as a lab's
// hardware does, with no meter of what the CPU wrote: the driver's accounts
// must then say "unknown", not a number.
import { imbalance } from '../../driver/collect/ledger.js';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { traceContexts, type ContextResult } from '../../driver/contexts.js';
import type { TraceRequest } from '../../driver/request.js';
import type { GeneratedWorkload } from '../sim/workload/index.js';
import { seededWorkload, type ScenarioContext, type TargetCalls } from './kit/context.js';
import { expectGrowRefills, pmisWithoutTopaBit, secondWorkload } from './kit/contexts-kit.js';
import { everyPmiHandled, timingVolume, topa } from './kit/helpers.js';
import { firstSkip, needs, type Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';
import { ownedBranches, ownerOf } from './kit/truth-owner.js';

/** Where the third context's workload lives: clear of the others (contexts-kit.ts), below 2^31. */
const THIRD_BASE = 0x3000_0000n;

/** The scenario for one way of switching: XSAVES/XRSTORS, or by hand. */
function pmiOtherContext(mode: 'xsaves' | 'manual'): Scenario {
  const how = mode === 'xsaves' ? 'XSAVES/XRSTORS' : 'RDMSR/WRMSR (CTL first on save, last on restore)';
  return {
    name: `${mode}-pmi-other-context`,
    checks: `three contexts switched by ${how} (a short one exits first): a ToPA PMI delivered after the save is handled on the saved context's image while another traces; all lossless; flow = own truth`,
    appliesTo: mode === 'xsaves'
      ? 'CPUs with XSAVES of PT state and multi-entry ToPA (the model: real targets run one workload per CPU)'
      : 'CPUs with multi-entry ToPA (the model: real targets run one workload per CPU)',
    targets: ['sim'],
    skip: (env) => firstSkip(needsMultiEntryTopa(env.caps),
      mode === 'xsaves' ? needs(env.caps.xsaves && env.caps.xssPtState, 'XSAVES of PT state (CPUID.(0DH,1):EAX[3], ECX[8])') : undefined),
    negative: mode === 'xsaves' ? 'xrstors-ctl-first' : 'stale-pointers',
    catches: ['ignore-switched-out'],
    run: (ctx) => runContexts(ctx, mode),
  };
}

async function runContexts(ctx: ScenarioContext, mode: 'xsaves' | 'manual'): Promise<void> {
  const sim = ctx.sim;
  const a = ctx.workload({ minBranches: 40_000 });
  // T is short and exits first; B outlives A. After T's exit the round robin must skip it both
  // ways: from A on to B, and from B on to A, until A exits and B runs alone.
  const t = seededWorkload((ctx.env.seed * 13 + 5) >>> 0, { base: THIRD_BASE, minBranches: 2_000 });
  const b = secondWorkload(ctx, a.model.branchCount + 2_000);
  // Each context filters on its own image where the CPU can (ADDR0): a restore that does not bring
  // the range back leaves the other context's, and the context's trace goes missing.
  const filters = ctx.env.caps.ipFiltering && ctx.env.caps.numAddressRanges > 0;
  const reqOf = (w: GeneratedWorkload): TraceRequest => topa('grow', 3, {
    switching: mode, ...timingVolume(ctx.env.caps),
    ...(filters ? { ranges: [{ role: 'filter' as const, a: w.base, b: w.base + BigInt(w.image.length) - 1n }] } : {}),
  });
  const req = reqOf(a);
  const from = ctx.target.lines.length;
  // The manual variant counts nothing the CPU wrote, as on hardware (`writtenNow` absent).
  const metered = sim !== undefined && mode === 'xsaves';
  const t0 = performance.now();
  const results: ContextResult[] = await traceContexts(ctx.target, [
    { name: 'A', workload: a, req }, { name: 'T', workload: t, req: reqOf(t) }, { name: 'B', workload: b, req: reqOf(b) },
  ], {
    sliceBranches: 48,
    ...ctx.sessionOptions(),
    ...(metered ? { writtenNow: () => sim.written(0) } : {}),
  });
  const runUs = Math.ceil((performance.now() - t0) * 1000);
  // What happened is read from the transcript, as a lab reads it: the PMIs, and what the driver did after each event.
  const spans = callSpans(ctx, from);
  const pmiLines = ctx.target.lines.slice(from).filter((l) => l.op === 'pmi');
  const clearEvents = pmisWithoutTopaBit(ctx, from);
  const [ra, rt, rb] = results as [ContextResult, ContextResult, ContextResult];
  ctx.result = ra;
  const saved = results.flatMap((r) => r.pmis.filter((p) => p.action === 'handled-saved').map(() => r.name));
  ctx.expect(`a ToPA PMI arrived after the ${mode === 'xsaves' ? 'XSAVES' : 'save'} and was handled on the switched-out context's saved image`, saved.length > 0,
    `${saved.length} of ${pmiLines.length} PMIs (${saved.join('') || 'none'})`);
  // A PMI already in flight when an earlier handler or a final stop acknowledged its GLOBAL_STATUS[55]
  // still arrives (the interrupt is not recalled) and must be left alone as not a ToPA PMI.
  const notTopa = results.reduce((n, r) => n + r.pmis.filter((p) => p.action === 'not-topa').length, 0);
  ctx.expectEqual('exactly the PMIs that arrived with GLOBAL_STATUS[55] already clear were left alone as not ToPA PMIs', notTopa, clearEvents);
  for (const r of results) {
    const topaPmis = r.pmis.filter((p) => p.action !== 'not-topa');
    // T may exit before its first INT region fills.
    ctx.expect(`context ${r.name}: every ToPA PMI was handled`, (r === rt || topaPmis.length > 0) && everyPmiHandled(topaPmis), r.pmis.map((p) => p.action).join(','));
    expectGrowRefills(ctx, r);
    ctx.expectPmiRecords(r, req, { label: `context ${r.name}`, most: { handler: spans.get('pmi') ?? NONE, stop: spans.get('exit') ?? NONE } });
    ctx.expectTraceOffWindows(r, runUs, { metered: false, label: `context ${r.name}` });
    ctx.expect(`context ${r.name}: lossless, and its ledger ${metered ? 'balances' : 'leaves what the CPU wrote unknown (no meter)'}`,
      r.ledger.lost.length === 0 && imbalance(r.ledger) === (metered ? 0 : undefined) && (r.ledger.written !== undefined) === metered,
      `written ${r.ledger.written ?? '?'}, collected ${r.ledger.collected}, lost ${JSON.stringify(r.ledger.lost)}`);
  }
  ctx.expect('the contexts took turns many times, each switched out and in', ra.switches >= 5 && rb.switches >= 5 && rt.switches >= 1,
    `A ${ra.switches}, T ${rt.switches}, B ${rb.switches} switches`);
  ctx.expectEqual('tracing is off at the end', IA32_RTIT_CTL.decode(await ctx.target.rdmsr(0, IA32_RTIT_CTL.address)).TraceEn, false);
  if (sim) {
    // Tracing must never be off for a context while it runs: each workload's every branch is in truth.
    const traced = [a, t, b].map((w) => ownedBranches(sim, w));
    ctx.expectEqual('every branch of every workload was traced (each context\'s filters and output came back at every restore)',
      traced, [a.model.branchCount, t.model.branchCount, b.model.branchCount]);
  }
  const lines = ctx.target.lines.slice(from);
  ctx.expectEqual('every buffer and table the driver allocated was freed', lines.filter((l) => l.op === 'alloc').length, lines.filter((l) => l.op === 'free').length);
  // trace.pt is context A's; truth.jsonl keeps A's records only, so `ptlab flow` of A's trace must equal it.
  ctx.truthFilter = { owner: ownerOf(a) };
  ctx.expectFlowEqualsTruth('ptlab flow of context A\'s trace equals A\'s part of truth.jsonl');
}

const NONE: TargetCalls = { roundTrips: 0, batches: 0 };

/**
 * The most target calls and MSR batches the driver made after an event of each kind (pmi, slice,
 * exit) until the next event, read from the transcript from line `from` on (the last span ends
 * with the transcript).
 */
function callSpans(ctx: ScenarioContext, from: number): Map<string, TargetCalls> {
  const t = ctx.target;
  const events = [];
  for (let i = from; i < t.lines.length; i++) if (['pmi', 'slice', 'exit'].includes(t.lines[i]!.op)) events.push(i);
  const most = new Map<string, TargetCalls>();
  for (const [k, i] of events.entries()) {
    const end = events[k + 1] ?? t.lines.length;
    const trips = (k + 1 < events.length ? t.roundTripOf[end]! : t.roundTrips - 1) - t.roundTripOf[i]!;
    const m = most.get(t.lines[i]!.op) ?? NONE;
    most.set(t.lines[i]!.op, { roundTrips: Math.max(m.roundTrips, trips), batches: Math.max(m.batches, ctx.batchesSince(i + 1, end)) });
  }
  return most;
}

/** The `xsaves-pmi-other-context` scenario (see the file comment). */
export const xsavesPmiOtherContext: Scenario = pmiOtherContext('xsaves');

/** The `manual-pmi-other-context` scenario (see the file comment). */
export const manualPmiOtherContext: Scenario = pmiOtherContext('manual');
