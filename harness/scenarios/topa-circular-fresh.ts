// topa-circular-fresh: the circular branch of the SDM PMI algorithm
// (docs/sdm/output.md §7.1): END back to the base, and every filled region is
// swapped for a fresh one before the CPU comes round again. The ring is the
// 3 regions asked for, INT on every entry but the last before END (the skid
// guard), and each region the CPU filled gets exactly one fresh successor.
import { everyPmiHandled, linesOf } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

const OUTPUT_BASE = 0x560;
const K = 3, REGION = 4096;

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
    const from = ctx.target.lines.length;
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'circular-fresh', regionSize: REGION, regions: K }, ...extra }, { workload });
    const lines = ctx.target.lines.slice(from);
    const bases = new Set(linesOf(lines, 'rdmsr', OUTPUT_BASE).map((l) => l.result));
    ctx.expectEqual('the CPU stayed in one table (END back to the base)', bases.size, 1);
    // The first table write, before any PMI: the ring as built.
    const firstPmi = lines.findIndex((l) => l.op === 'pmi');
    const built = linesOf(firstPmi < 0 ? lines : lines.slice(0, firstPmi), 'topa').map((l) => `${l.index}:${(l.entry ?? '').replace(/^output 0x[0-9a-f]+ 4K/, 'output').replace(/^END → 0x[0-9a-f]+/, 'END')}`);
    ctx.expectEqual(`the ring as built: ${K} regions, INT on all but the last, END back`, built, ['0:output INT', '1:output INT', '2:output', '3:END']);
    // Every region the CPU filled was replaced by one fresh region, but those filled since the last
    // refill: at most K − 1 (the last entry before END raises no PMI).
    const filled = Math.floor(r.stream.length / REGION);
    const swapped = linesOf(lines, 'alloc').length - 1 - K;
    ctx.expect('each filled region was swapped for exactly one fresh one (but the last few)', swapped <= filled && swapped >= filled - (K - 1),
      `${swapped} fresh regions for ${filled} filled regions in ${r.stream.length} bytes`);
    ctx.expect('the ring went round: more bytes than the ring holds', r.stream.length > 3 * 4096, `${r.stream.length} bytes`);
    ctx.expect('every PMI was handled', r.pmis.length >= 2 && everyPmiHandled(r.pmis), `${r.pmis.length} PMIs`);
    ctx.expectLossless(r);
  },
};
