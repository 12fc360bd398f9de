// topa-circular-fresh: the circular branch of the SDM PMI algorithm
// (spec/output.md §7.1): END back to the base, and every filled region is
// swapped for a fresh one before the CPU comes round again.
import { everyPmiHandled, linesOf } from './helpers.js';
import type { Scenario } from './scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

const OUTPUT_BASE = 0x560;

/** The `topa-circular-fresh` scenario (see the file comment). */
export const topaCircularFresh: Scenario = {
  name: 'topa-circular-fresh',
  checks: 'ToPA circular ring with fresh regions: the CPU wraps in one table, filled regions are replaced; lossless',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-topa-pmi',
  async run(ctx) {
    const { workload, extra } = ctx.busy(32_768);
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'circular-fresh', regionSize: 4096, regions: 3 }, ...extra }, { workload });
    const bases = new Set(linesOf(ctx.target.lines, 'rdmsr', OUTPUT_BASE).map((l) => l.result));
    ctx.expectEqual('the CPU stayed in one table (END back to the base)', bases.size, 1);
    const allocs = linesOf(ctx.target.lines, 'alloc').length;
    ctx.expect('filled regions were swapped for fresh ones', allocs > 4, `${allocs} allocations (1 table + 3 regions at start)`);
    ctx.expect('the ring went round: more bytes than the ring holds', r.stream.length > 3 * 4096, `${r.stream.length} bytes`);
    ctx.expect('every PMI was handled', r.pmis.length >= 2 && everyPmiHandled(r.pmis), `${r.pmis.length} PMIs`);
    ctx.expectLossless(r);
  },
};
