// single-entry-other-context: two contexts on a MENTRY=0 CPU, where each
// traces into the only layout it has (one region with INT+STOP, then END back
// to the table: docs/sdm/output.md §4.6) and the PMI comes before the region
// is full, by a margin the SDM does not give. Context A runs with interrupts
// off (a long IF=0 stretch, §4.5): the PMI its region raises is taken only
// after A left the CPU (its state saved, B's restored). With long slices A
// fills its region meanwhile and stops at its full STOP+INT entry (Stopped=1,
// the pointer at the region's end): the handler must find that PMI A's by A's
// saved pointers and service A on its saved image (B's MSRs are not A's), so
// A traces on once restored. B's early PMI may be taken after B's switch-out
// (its skid crosses the switch): neither context's pointers then say whose it
// is, so the driver services every context with unread output in its INT
// region (§7.3); B must stay lossless. With short slices A is mostly switched
// out before its region fills, and serviced while out all the same.
import { imbalance } from '../../driver/collect/ledger.js';
import { traceContexts, type ContextResult } from '../../driver/contexts.js';
import type { TraceRequest } from '../../driver/request.js';
import type { GeneratedWorkload } from '../sim/workload/index.js';
import { seededWorkload, type ScenarioContext } from './kit/context.js';
import { expectContextsEnded, expectPmisSorted, expectTracedOnAfterStops, pmiActions, secondWorkload, switchingOf, topaBitClearCounter } from './kit/contexts-kit.js';
import { linesOf, timingVolume } from './kit/helpers.js';
import { interruptsOffWhile } from './kit/interrupts-off.js';
import type { Scenario } from './kit/scenario.js';
import { needsSingleEntryTopa } from './single-entry-topa.js';
import { ownedBranches, ownerOf } from './kit/truth-owner.js';

/** Each context's one region. */
const REGION = 4096;

/** The `single-entry-other-context` scenario (see the file comment). */
export const singleEntryOtherContext: Scenario = {
  name: 'single-entry-other-context',
  checks: 'two single-entry contexts on a MENTRY=0 CPU; A takes its early PMI only after it left the CPU: stopped at its full STOP+INT entry, A is serviced on its saved image ("stop" once, Stopped cleared) and traces on; B stays lossless though its own early PMI may land after its switch-out',
  appliesTo: 'MENTRY=0 CPUs (Broadwell), where single-entry is the only ToPA layout (the model: real targets run one workload per CPU)',
  targets: ['sim'],
  skip: (env) => needsSingleEntryTopa(env.caps,
    'a multi-entry ToPA CPU raises the PMI only once the region is full: protect-unread-other-context covers a context stopped at its STOP+INT entry there'),
  // The early PMI comes 512 bytes before full (docs/sdm/output.md §4.6); B's skid plus the flush grain must fit.
  sim: { pmiSkid: 64 },
  negative: 'no-topa-stop-status',
  catches: ['skip-merged-pmi'],
  async run(ctx) {
    // A's bytes per branch differ tenfold between workloads; a long slice must write its region full
    // (A stops at its STOP+INT entry), a short one well under the early PMI's margin. Both are sized
    // from A's rate, measured by tracing A alone (its PMIs on time: lossless); A is chosen long enough
    // for four long slices.
    let opts = { minBranches: 4 * LONG_SLICE }, rate = 0, long = LONG_SLICE;
    for (let k = 0; k < 4; k++) {
      const w = seededWorkload(ctx.env.seed, opts);
      rate = await bytesPerBranch(ctx, w);
      long = Math.max(LONG_SLICE, Math.ceil((LONG_SLICE_REGIONS * REGION) / rate));
      if (w.model.branchCount >= 4 * long) break;
      opts = { minBranches: 4 * long };
    }
    const a = ctx.workload(opts);
    const b = secondWorkload(ctx, 4 * long);
    ctx.figure('aBytesPerBranch', Number(rate.toFixed(3)));
    ctx.figure('longSliceBranches', long);
    // truth.jsonl starts at the long run: the measurements before it traced other candidates at A's base.
    const truthAt = ctx.sim?.truthLog(0)?.length ?? 0;
    const rl = await twoContexts(ctx, a, b, long, 'long slices');
    ctx.result = rl;
    ctx.expect('long slices: A was serviced on its saved image while stopped at its full STOP+INT entry',
      rl.pmis.some((p) => p.action === 'handled-saved' && p.stopped), pmiActions(rl));
    ctx.truthFilter = { owner: ownerOf(a), from: truthAt };
    ctx.expectFlowEqualsTruth('ptlab flow of A\'s trace up to its first stop gap is a prefix of A\'s part of truth.jsonl', 'prefix');
    // Short slices: each writes well under the early PMI's margin on average, so A is mostly switched
    // out before its region fills and serviced at B's PMIs. A is IF=0 from its entry here: a PMI the
    // bytes of A's own restore raise stays pending too (with a workload whose slices repeat exactly,
    // every crossing of the PMI's threshold can fall on the restore: seed 531).
    const rs = await twoContexts(ctx, a, b, Math.max(20, Math.floor(SHORT_SLICE_BYTES / rate)), 'short slices', true);
    ctx.expect('short slices: A was serviced on its saved image at least twice', rs.pmis.filter((p) => p.action === 'handled-saved').length >= 2, pmiActions(rs));
  },
};

/** Bytes of output per branch of `w`, traced alone on one context (no switch: its PMIs on time, lossless). */
async function bytesPerBranch(ctx: ScenarioContext, w: GeneratedWorkload): Promise<number> {
  const [solo] = await traceContexts(ctx.target, [{ name: 'A alone', workload: w, req: singleEntry(ctx) }], { sliceBranches: w.model.branchCount, ...ctx.sessionOptions() });
  return solo!.ledger.collected / w.model.branchCount;
}

/** How many regions' worth of output a long slice of A writes, at A's measured rate: enough to fill one in any stretch. */
const LONG_SLICE_REGIONS = 3;

/** The fewest branches each context runs before a switch in the long run (more when A's rate calls for it). */
const LONG_SLICE = 40_000;

/** Bytes A writes in a short slice: well under the early PMI's 512-byte margin (docs/sdm/output.md §4.6). */
const SHORT_SLICE_BYTES = 128;

/** A context's request: one region with INT+STOP, switched by XSAVES where the CPU can. */
function singleEntry(ctx: ScenarioContext): TraceRequest {
  return { output: { scheme: 'topa', policy: 'single-entry', regionSize: REGION, regions: 1 }, switching: switchingOf(ctx), ...timingVolume(ctx.env.caps) };
}

/** One run of A (interrupts off; from its entry with `holdAtEntry`) and B with `slice`-branch slices and its expectations; A's result. */
async function twoContexts(ctx: ScenarioContext, a: GeneratedWorkload, b: GeneratedWorkload, slice: number, label: string, holdAtEntry = false): Promise<ContextResult> {
  const sim = ctx.sim!;
  const req = singleEntry(ctx);
  const from = ctx.target.lines.length, truthFrom = sim.truthLog(0)?.length ?? 0;
  // PMIs with GLOBAL_STATUS[55] clear as the driver got them (one in flight when a handler acknowledged [55]).
  const clear = topaBitClearCounter();
  const results = await traceContexts(interruptsOffWhile(ctx.target, sim, a, { holdAtEntry, onPmi: clear.onPmi }), [
    { name: 'A', workload: a, req }, { name: 'B', workload: b, req },
  ], { sliceBranches: slice, ...ctx.sessionOptions(), writtenNow: () => sim.written(0) });
  const [ra, rb] = results as [ContextResult, ContextResult];
  const lines = ctx.target.lines.slice(from);
  expectPmisSorted(ctx, label, results, clear.count());
  for (const r of results) ctx.expectEqual(`${label}: context ${r.name}: the ledger balances`, imbalance(r.ledger), 0);
  // After each stop a handler cleared, A traced on (Stopped cleared and a fresh region swapped in,
  // in the image the next restore loaded).
  const handledStops = expectTracedOnAfterStops(ctx, label, ra);
  // A: one "stop" per stop a handler or the final stop found, where the handler found it (regions
  // swapped early end anywhere in the stream), of an unknown size, and no other loss.
  const stops = ra.ledger.lost.filter((l) => l.reason === 'stop');
  ctx.expectEqual(`${label}: A: one "stop" loss per stop a handler or the final stop found, where it found it, and no other loss`,
    [stops.length, handledStops.every((p) => stops.some((l) => l.at === p.at && l.bytes === null)), ra.ledger.lost.length],
    [handledStops.length + (ra.final.stopped ? 1 : 0), true, stops.length]);
  // A service on a saved image follows output written since the context's last one (an empty region is not due).
  for (const r of results) {
    const empty = r.pmis.filter((p, i) => p.action === 'handled-saved' && i > 0 && p.at <= r.pmis[i - 1]!.at).length;
    ctx.expect(`${label}: context ${r.name}: each service on its saved image found output written since the one before`, empty === 0, `${empty} found none; PMIs ${pmiActions(r)}`);
  }
  ctx.expect(`${label}: B: lossless, its early PMIs serviced wherever they landed`, rb.ledger.lost.length === 0, `${JSON.stringify(rb.ledger.lost)}; PMIs ${pmiActions(rb)}`);
  ctx.expectEqual(`${label}: every branch of B was traced`, ownedBranches(sim, b, truthFrom), b.model.branchCount);
  // A sound run takes about one PMI per region of output; servicing every context with unread
  // output at a PMI whose owner is unknown at most doubles that.
  const pmis = linesOf(lines, 'pmi').length, bytes = ra.ledger.collected + rb.ledger.collected;
  ctx.expect(`${label}: no PMI storm: at most two PMIs per region of output, plus a few`, pmis <= 8 + (2 * bytes) / REGION, `${pmis} PMIs for ${bytes} bytes`);
  await expectContextsEnded(ctx, label, results, from);
  return ra;
}
