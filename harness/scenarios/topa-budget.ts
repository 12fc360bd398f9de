// topa-budget: the SDM's ToPA PMI algorithm decides its branch at each PMI
// (docs/sdm/output.md §7.1): add entries while memory and the table allow, else
// make the table circular. With 4 KiB regions, 3 per batch, the handler grows
// the table from 3 to 6 regions, then circularizes it once (everything still
// only in memory is copied out, the guard STOP lifted) and from then on copies
// each region out before the ring reuses it. Three runs, each stopped at 6
// regions by a different limit: a 24 KiB budget (6 regions fit exactly), a
// 28 KiB budget (a 7th to 9th region would not fit), and a large budget in
// 9-entry tables (a batch would fill entries 6–8 exactly, leaving no slot for
// the END). Each branch is
// a `note` in the transcript; the regions never exceed the budget, no entry is
// written past the table; nothing is lost.
import { everyPmiHandled, linesOf } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

const REGION = 4096;
/** The limits of the three runs: budget in regions, table entries (END included). */
const RUNS = [{ budget: 6, entries: 512 }, { budget: 7, entries: 512 }, { budget: 64, entries: 9 }] as const;

/** The `topa-budget` scenario (see the file comment). */
export const topaBudget: Scenario = {
  name: 'topa-budget',
  checks: 'ToPA under a memory budget (24 KiB, 28 KiB, or 9-entry tables): grow while it fits, then circularize once and reuse copied-out regions; the branches in the transcript; lossless',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-topa-pmi',
  async run(ctx) {
    const { workload, extra } = ctx.busy(12 * REGION);
    for (const { budget, entries } of RUNS) {
      const run = `budget ${budget} × 4 KiB, ${entries}-entry tables`;
      const from = ctx.target.lines.length;
      const before = ctx.sim?.truthLog(0)?.length ?? 0;
      ctx.truthFilter = { from: before }; // truth.jsonl: the last run's
      const r = await ctx.trace({ output: { scheme: 'topa', policy: 'budget', regionSize: REGION, regions: 3, budget: budget * REGION, tableEntries: entries }, ...extra }, { workload });
      const lines = ctx.target.lines.slice(from);
      const branches = linesOf(lines, 'note').filter((l) => l.value?.startsWith('pmi: ')).map((l) => l.value!.slice(5));
      const shape = branches.join(',').replace(/(ring,)*ring$/, 'ring…').replace(/(grow,)*grow/, 'grow…');
      ctx.expect(`${run}: the branches: grow, then circularize once, then the ring`, /^grow…,circularize(,ring…)?$/.test(shape), `${branches.length} PMIs: ${shape}`);
      // The first 4 KiB allocation is the table page; the rest are output regions.
      const regions = linesOf(lines, 'alloc').length - 1;
      ctx.expectEqual(`${run}: the table grew to 6 regions and no further (within the budget)`, regions, 6);
      const past = linesOf(lines, 'topa').filter((l) => (l.index ?? 0) >= entries);
      ctx.expectEqual(`${run}: no entry written past the table's ${entries} entries`, past.length, 0);
      ctx.expect(`${run}: the ring went round: more bytes than its 6 regions hold`, r.stream.length > 6 * REGION, `${r.stream.length} bytes`);
      ctx.expect(`${run}: every PMI was handled`, everyPmiHandled(r.pmis), r.pmis.map((p) => p.action).join(','));
      ctx.expectLossless(r);
    }
  },
};
