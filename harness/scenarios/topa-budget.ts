// topa-budget: the SDM's ToPA PMI algorithm decides its branch at each PMI
// (spec/output.md §7.1): add entries while memory allows, else make the table
// circular. Under a 28 KiB budget of 4 KiB regions the handler grows the table
// from 3 to 6 regions (another batch of 3 would not fit), then circularizes it once (everything still only in
// memory is copied out, the guard STOP lifted) and from then on copies each
// region out before the ring reuses it. Each branch is a `note` in the
// transcript; the regions never exceed the budget; nothing is lost.
import { everyPmiHandled, linesOf } from './helpers.js';
import type { Scenario } from './scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

const REGION = 4096, BUDGET = 7 * REGION;

/** The `topa-budget` scenario (see the file comment). */
export const topaBudget: Scenario = {
  name: 'topa-budget',
  checks: 'ToPA under a 28 KiB budget: grow while it fits, then circularize once and reuse copied-out regions; the branches in the transcript; lossless',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-topa-pmi',
  async run(ctx) {
    const { workload, extra } = ctx.busy(12 * REGION);
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'budget', regionSize: REGION, regions: 3, budget: BUDGET }, ...extra }, { workload });
    const branches = linesOf(ctx.target.lines, 'note').map((l) => l.value?.replace(/^pmi: /, '') ?? '');
    const shape = branches.join(',').replace(/(ring,)*ring$/, 'ring…').replace(/(grow,)*grow/, 'grow…');
    ctx.expect('the branches: grow, then circularize once, then the ring', /^grow…,circularize(,ring…)?$/.test(shape), `${branches.length} PMIs: ${shape}`);
    // The first 4 KiB allocation is the table page; the rest are output regions.
    const regions = linesOf(ctx.target.lines, 'alloc').length - 1;
    ctx.expect('the output regions never exceeded the budget', regions * REGION <= BUDGET, `${regions} regions of 4 KiB, budget ${BUDGET} bytes`);
    ctx.expect('the ring went round: more bytes than the budget holds', r.stream.length > BUDGET, `${r.stream.length} bytes`);
    ctx.expect('every PMI was handled', everyPmiHandled(r.pmis), r.pmis.map((p) => p.action).join(','));
    ctx.expectLossless(r);
  },
};
