// pmi-not-topa-contexts: the performance-monitoring interrupt is shared
// (docs/sdm/msrs.md §11) while two contexts share the CPU. A PMI whose
// IA32_PERF_GLOBAL_STATUS has bit 55 clear (a counter overflow, Ovf_PMC bit 0)
// arrives while A is loaded and B switched out: it is neither context's ToPA
// PMI, so the driver must neither service B's saved image nor A's tables, nor
// touch the target at all; both contexts' real ToPA PMIs are handled as
// usual and both traces stay whole.
import { imbalance } from '../../driver/collect/ledger.js';
import { IA32_PERF_GLOBAL_STATUS, IA32_RTIT_CTL, IA32_RTIT_STATUS } from '../../driver/hw/msrs.js';
import type { TargetEvent } from '../../driver/target.js';
import { expectGrowRefills, growPair, pmisWithoutTopaBit, secondWorkload, switchingOf } from './kit/contexts-kit.js';
import { everyPmiHandled, timingVolume } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { filterEvents } from './kit/target-wrap.js';
import { needsMultiEntryTopa } from './topa-grow.js';
import { ownedBranches, ownerOf } from './kit/truth-owner.js';

/** A's slice after which the counter-overflow PMI arrives (B has been switched out by then). */
const AT_SLICE = 3;

/** The `pmi-not-topa-contexts` scenario (see the file comment). */
export const pmiNotTopaContexts: Scenario = {
  name: 'pmi-not-topa-contexts',
  checks: 'two contexts; a PMI with GLOBAL_STATUS[55] clear (a counter overflow) arrives while one is switched out: no target access, recorded "not-topa" by the loaded one; every ToPA PMI handled; both lossless',
  appliesTo: 'CPUs with multi-entry ToPA (the model: real targets run one workload per CPU)',
  targets: ['sim'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-topa-pmi',
  catches: ['invert-not-topa'],
  async run(ctx) {
    const sim = ctx.sim!;
    const a = ctx.workload({ minBranches: 12_000 });
    const b = secondWorkload(ctx, 12_000);
    const extra = { switching: switchingOf(ctx), ...timingVolume(ctx.env.caps) };
    let injected: { readonly lines: number } | undefined;
    const from = ctx.target.lines.length;
    // The counter's PMI, as the CPU delivers it: what the top half reads is the CPU's state then.
    const target = filterEvents(ctx.target, async function* (events, workload, cpu) {
      let slices = 0;
      for await (const ev of events) {
        if (workload === a && ev.kind === 'slice' && ++slices === AT_SLICE) {
          const f = sim.unit(cpu), line0 = ctx.target.lines.length;
          const pmi: TargetEvent = {
            kind: 'pmi', cpu, globalStatus: IA32_PERF_GLOBAL_STATUS.encode({ Ovf_PMC: 1 }), ctl: f.peek(IA32_RTIT_CTL.address),
            status: f.peek(IA32_RTIT_STATUS.address), acked: false, traceEnCleared: false,
          };
          yield pmi;
          injected = { lines: ctx.target.lines.length - line0 };
        }
        yield ev;
      }
    });
    const results = await growPair(ctx, target, a, b, extra, 200);
    // Besides it, a PMI already in flight when a handler acknowledged GLOBAL_STATUS[55] still arrives (an
    // interrupt is not recalled) with [55] clear: the transcript shows those, and they are left alone too.
    const inFlight = pmisWithoutTopaBit(ctx, from);
    const notTopa = results.map((r) => r.pmis.filter((p) => p.action === 'not-topa').length);
    ctx.expectEqual('the counter-overflow PMI was left alone by A, the loaded context, with no target access at all; so was every PMI in flight with [55] clear',
      [injected?.lines, notTopa[0]! >= 1, notTopa[0]! + notTopa[1]!], [0, true, inFlight + 1]);
    for (const r of results) {
      const topaPmis = r.pmis.filter((p) => p.action !== 'not-topa');
      ctx.expect(`context ${r.name}: every ToPA PMI was handled`, topaPmis.length > 0 && everyPmiHandled(topaPmis), r.pmis.map((p) => p.action).join(','));
      expectGrowRefills(ctx, r);
      ctx.expect(`context ${r.name}: lossless, and its ledger balances`, r.ledger.lost.length === 0 && imbalance(r.ledger) === 0,
        `written ${r.ledger.written ?? '?'}, collected ${r.ledger.collected}, lost ${JSON.stringify(r.ledger.lost)}`);
    }
    ctx.expectEqual('every branch of both workloads was traced', [a, b].map((w) => ownedBranches(sim, w)), [a.model.branchCount, b.model.branchCount]);
    ctx.truthFilter = { owner: ownerOf(a) };
    ctx.expectFlowEqualsTruth('ptlab flow of context A\'s trace equals A\'s part of truth.jsonl');
  },
};
