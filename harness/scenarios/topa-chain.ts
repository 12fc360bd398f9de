// topa-chain: the "END of the current table to a new table" branch of the SDM
// PMI algorithm (docs/sdm/output.md §7.1); the CPU follows END itself (§4.3).
import { everyPmiHandled, linesOf } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

const OUTPUT_BASE = 0x560;

/** The `topa-chain` scenario (see the file comment). */
export const topaChain: Scenario = {
  name: 'topa-chain',
  checks: 'ToPA chain policy: each PMI links END to a new table, and the CPU follows it (OUTPUT_BASE moves); lossless',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'wrong-topa-end',
  async run(ctx) {
    const { workload, extra } = ctx.busy(24_576);
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'chain', regionSize: 4096, regions: 2 }, ...extra }, { workload });
    // OUTPUT_BASE as read in the PMI handler and at the stop: the CPU moved into a chained table.
    const bases = new Set(linesOf(ctx.target.lines, 'rdmsr', OUTPUT_BASE).map((l) => l.result));
    ctx.expect('the CPU followed END into another table (OUTPUT_BASE changed)', bases.size > 1, [...bases].join(' '));
    ctx.expect('every PMI was handled', r.pmis.length >= 1 && everyPmiHandled(r.pmis), `${r.pmis.length} PMIs`);
    ctx.expectLossless(r);
  },
};
