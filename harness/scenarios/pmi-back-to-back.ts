// pmi-back-to-back: a skid longer than a region (docs/sdm/output.md §4.5), so a
// second INT region fills before the first PMI reaches the handler. The CPU
// has one GLOBAL_STATUS[55] and one LVT delivery for both: the second PMI
// merges into the first. The handler must account for every region filled
// since the last one, not just one, and the refill must make room for all of
// them — nothing lost, the flow whole.
import { everyPmiHandled } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

const REGION = 4096;

/** The `pmi-back-to-back` scenario (see the file comment). */
export const pmiBackToBack: Scenario = {
  name: 'pmi-back-to-back',
  checks: 'a PMI skid longer than a region: a second INT region fills before the handler runs; one handler accounts for both; lossless',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  // 1.5 regions of skid: the region after the INT region fills too before the PMI arrives.
  sim: { pmiSkid: REGION + REGION / 2 },
  negative: 'no-topa-pmi',
  catches: ['skip-unmask'],
  async run(ctx) {
    const { workload, extra } = ctx.busy(16 * REGION);
    // circular-fresh puts INT on every region but the last; 8 regions leave room for the long skid.
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'circular-fresh', regionSize: REGION, regions: 8 }, ...extra }, { workload });
    const handled = r.pmis.filter((p) => p.action === 'handled');
    const spans = handled.map((p, i) => p.at - (i === 0 ? 0 : handled[i - 1]!.at));
    ctx.expect('PMIs were taken and handled', handled.length >= 2 && everyPmiHandled(r.pmis), `${r.pmis.length} PMIs: ${r.pmis.map((p) => p.action).join(',')}`);
    if (ctx.sim) {
      // Only the model's skid is known; on hardware the skid is what it is, and the rest still holds.
      ctx.expect('a handler found two or more INT regions filled since the one before', spans.some((s) => s >= 2 * REGION), `bytes per PMI: ${spans.join(', ')}`);
    }
    ctx.expectLossless(r);
  },
};
