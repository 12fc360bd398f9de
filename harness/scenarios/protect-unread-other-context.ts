// protect-unread-other-context: a context stopped at its full STOP+INT entry,
// whose PMI is handled on its saved image while another context runs
// (docs/sdm/output.md §4.4, §4.5, §7.1–§7.3; docs/sdm/xsave.md §2–§5). Two
// contexts share one CPU. A traces into a protect-unread ring of three regions
// and runs with interrupts off (a long IF=0 stretch, §4.5): a PMI its INT
// regions raise is taken only when A leaves the CPU, after its state was saved
// (XSAVES where the CPU can, by hand otherwise) and B's restored, or at A's
// exit. A's reader is thus late: A often fills its ring up to the STOP+INT
// entry before unread data and stops there (Stopped=1, the pointer at the end
// of that region), and is saved like that. The handler must then service A on
// its saved image (B's MSRs are not A's): one "stop" loss, the ring re-armed
// past the full entry, Stopped cleared and the pointer moved on in the image,
// so A traces on once restored. B traces into a growing table with timely
// PMIs, and none of them may be taken for A (whose INT regions were all
// serviced), nor A's for B. Two runs: with long slices A stops before nearly
// every switch; with short ones it is mostly switched out before its STOP
// entry, its wake-up INT region (the one it was writing at the last refill)
// full, and that PMI is A's all the same.
import { imbalance } from '../../driver/collect/ledger.js';
import { traceContexts, type ContextResult } from '../../driver/contexts.js';
import { IA32_RTIT_OUTPUT_BASE, IA32_RTIT_STATUS } from '../../driver/hw/msrs.js';
import type { TraceRequest } from '../../driver/request.js';
import { hex } from '../../driver/base/hex.js';
import type { TranscriptLine } from '../rundir/transcript-line.js';
import type { GeneratedWorkload } from '../sim/workload/index.js';
import type { ScenarioContext } from './kit/context.js';
import { expectContextsEnded, expectGrowRefills, expectPmisSorted, expectTracedOnAfterStops, pmiActions, secondWorkload, switchingOf, topaBitClearCounter } from './kit/contexts-kit.js';
import { linesOf, timingVolume, topa } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';
import { interruptsOffWhile } from './kit/interrupts-off.js';
import { misplacedMarkers, REGION } from './topa-protect-unread.js';
import { ownedBranches, ownerOf } from './kit/truth-owner.js';

/** A's ring: three regions, so the wake-up INT is the entry the CPU writes right after a refill (topa/policies.ts `arm`). */
const RING = 3;

/** The `protect-unread-other-context` scenario (see the file comment). */
export const protectUnreadOtherContext: Scenario = {
  name: 'protect-unread-other-context',
  checks: 'two contexts; A\'s protect-unread ring takes its PMIs only after it left the CPU: A stops at the full STOP+INT entry, the PMI is handled on its saved image ("stop" once, ring re-armed, Stopped cleared) and A traces on; no PMI is taken for the wrong context',
  appliesTo: 'CPUs with multi-entry ToPA (the model: real targets run one workload per CPU)',
  targets: ['sim'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-topa-stop-status',
  catches: ['skip-merged-pmi'],
  async run(ctx) {
    const a = ctx.workload({ minBranches: 40_000 });
    const b = secondWorkload(ctx, 40_000);
    // Long slices: A fills its ring after the wake-up PMI and stops before it is switched out. This
    // run's A trace is the exported one (truth.jsonl keeps A's records only).
    const ra = await twoContexts(ctx, a, b, LONG_SLICE);
    ctx.result = ra;
    ctx.expect('long slices: A\'s PMIs were handled on its saved image, at least twice with A stopped at the full STOP+INT entry',
      ra.pmis.filter((p) => p.action === 'handled-saved' && p.stopped).length >= 2, pmiActions(ra));
    ctx.truthFilter = { owner: ownerOf(a) };
    ctx.expectFlowEqualsTruth('ptlab flow of A\'s trace up to its first stop gap is a prefix of A\'s part of truth.jsonl', 'prefix');
    // Short slices: A is mostly switched out before it reaches its STOP entry, with the wake-up INT
    // region it was writing at the last refill full: that PMI is still A's.
    const rs = await twoContexts(ctx, a, b, SHORT_SLICE);
    ctx.expect('short slices: A\'s PMIs were handled on its saved image, at least twice',
      rs.pmis.filter((p) => p.action === 'handled-saved').length >= 2, pmiActions(rs));
    // Merged PMIs: B runs with interrupts off too, and its switch to A keeps them off, so a PMI B's
    // filled INT region raised waits through A's slice (with A's own) until A leaves. The one
    // interrupt then stands for A's filled INT region and B's (§4.5), on every seed: both contexts
    // must be serviced, A on its image and B on the CPU.
    const rm = await twoContexts(ctx, a, b, LONG_SLICE, true);
    ctx.expect('merged PMIs: A\'s PMIs were handled on its saved image, at least twice',
      rm.pmis.filter((p) => p.action === 'handled-saved').length >= 2, pmiActions(rm));
  },
};

/** B's regions when its PMIs wait to the end of its slice (merged PMIs): the regions before its STOP guard hold a whole slice's output. */
const B_HELD_REGION = 32_768;

/** Branches each context runs before a switch: A writes more than its ring after a PMI, or less. */
const LONG_SLICE = 3000, SHORT_SLICE = 1500;

/** One run of A and B with `slice`-branch slices and its expectations (labelled by the slice); A's result. */
async function twoContexts(ctx: ScenarioContext, a: GeneratedWorkload, b: GeneratedWorkload, slice: number, holdAtEntry = false): Promise<ContextResult> {
  const sim = ctx.sim!;
  const label = holdAtEntry ? 'merged PMIs' : `${slice === LONG_SLICE ? 'long' : 'short'} slices`;
  const mode = switchingOf(ctx);
  const extra = { switching: mode, ...timingVolume(ctx.env.caps) } as const;
  const reqA: TraceRequest = { output: { scheme: 'topa', policy: 'protect-unread', regionSize: REGION, regions: RING }, ...extra };
  const from = ctx.target.lines.length, truthFrom = sim.truthLog(0)?.length ?? 0;
  // PMIs with GLOBAL_STATUS[55] clear as the driver got them (the interrupts-off CPU reads [55] when it
  // delivers a held PMI, so the transcript's own count can differ): e.g. one in flight when a final
  // stop acknowledged [55] (an interrupt is not recalled); each must be left alone as not a ToPA PMI.
  const clear = topaBitClearCounter();
  const results = await traceContexts(interruptsOffWhile(ctx.target, sim, a, { holdAtEntry, onPmi: clear.onPmi, ...(holdAtEntry ? { carry: b } : {}) }), [
    { name: 'A', workload: a, req: reqA }, { name: 'B', workload: b, req: holdAtEntry ? { output: { scheme: 'topa', policy: 'grow', regionSize: B_HELD_REGION, regions: 3 }, ...extra } : topa('grow', 3, extra) },
  ], { sliceBranches: slice, ...ctx.sessionOptions(), writtenNow: () => sim.written(0) });
  const [ra, rb] = results as [ContextResult, ContextResult];
  const lines = ctx.target.lines.slice(from);
  expectPmisSorted(ctx, label, results, clear.count());
  const handledStops = expectTracedOnAfterStops(ctx, label, ra);
  // One "stop" per stop: each handler that found A stopped, and the final stop if A ended stopped.
  const stops = ra.ledger.lost.filter((l) => l.reason === 'stop');
  ctx.expectEqual(`${label}: A: one "stop" loss per stop a handler or the final stop found, each at a region boundary, and no other loss`,
    [stops.length, stops.every((l) => l.at % REGION === 0 && l.bytes === null), ra.ledger.lost.length],
    [handledStops.length + (ra.final.stopped ? 1 : 0), true, stops.length]);
  // A restore may load Stopped=1 only while the stop's PMI is still pending (taken then, on the CPU).
  const table = linesOf(lines, 'wrmsr', IA32_RTIT_OUTPUT_BASE.address)[0]?.value ?? '';
  const restoredStopped = restoredStatus(lines, table).filter((st) => IA32_RTIT_STATUS.decode(st).Stopped).length;
  const liveStops = ra.pmis.filter((p) => p.action === 'handled' && p.stopped).length;
  ctx.expect(`${label}: A was restored with STATUS.Stopped=1 only with its PMI still pending: a handled stop was cleared in the saved image`,
    restoredStopped <= liveStops, `${restoredStopped} restores with Stopped=1; ${liveStops} stops handled on the CPU after a restore`);
  const bad = misplacedMarkers(lines, { k: RING, table });
  const refills = ra.pmis.filter((p) => p.branch !== undefined).length;
  ctx.expect(`${label}: A: after every refill, STOP+INT on the entry before unread data and the wake-up INT where the policy puts them`,
    bad.length === 0 && refills > 0, bad.length ? bad.slice(0, 2).join('; ') : `${refills} refills`);
  // B: timely PMIs, each taken for B; one taken for A (or one of A's taken for B) shows in B's growth.
  // With its PMIs held to the end of its slice B fills several INT regions per interrupt, so only
  // timely PMIs grow its table once per INT region.
  if (!holdAtEntry) expectGrowRefills(ctx, rb, label);
  if (holdAtEntry) {
    ctx.expect(`${label}: one interrupt stood for A's filled INT region and B's, and B was serviced on the CPU after A on its image`,
      rb.pmis.some((p) => p.merged), pmiActions(rb));
  }
  ctx.expect(`${label}: B: lossless`, rb.ledger.lost.length === 0, JSON.stringify(rb.ledger.lost));
  for (const r of results) ctx.expectEqual(`${label}: context ${r.name}: the ledger balances`, imbalance(r.ledger), 0);
  // A sound run takes at most one ToPA PMI per INT region (4 KiB at least each), plus a few.
  const pmis = linesOf(lines, 'pmi').length, bytes = ra.ledger.collected + rb.ledger.collected;
  ctx.expect(`${label}: no PMI storm: at most one PMI per KiB of output, plus a few`, pmis <= 16 + bytes / 1024, `${pmis} PMIs for ${bytes} bytes`);
  ctx.expectEqual(`${label}: every branch of B was traced`, ownedBranches(sim, b, truthFrom), b.model.branchCount);
  await expectContextsEnded(ctx, label, results, from);
  return ra;
}

/** STATUS as each restore of the context whose ToPA table is `table` loaded it: its XRSTORS areas, or its STATUS writes. */
function restoredStatus(lines: readonly TranscriptLine[], table: string): bigint[] {
  const out: bigint[] = [];
  let base: string | undefined;
  for (const l of lines) {
    if (l.op === 'xrstors' && l.area?.IA32_RTIT_OUTPUT_BASE === table && l.area.IA32_RTIT_STATUS) out.push(BigInt(l.area.IA32_RTIT_STATUS));
    if (l.op === 'wrmsr' && l.msr === hex(IA32_RTIT_OUTPUT_BASE.address)) base = l.value;
    if (l.op === 'wrmsr' && l.msr === hex(IA32_RTIT_STATUS.address) && base === table && l.value !== undefined) out.push(BigInt(l.value));
  }
  return out;
}
