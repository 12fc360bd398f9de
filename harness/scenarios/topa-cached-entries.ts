// topa-cached-entries: a CPU may read ToPA entries ahead and keep them from
// TraceEn 0→1 on (SDM: software must not change a table while TraceEn=1; the
// model's `full` profile caches every reachable entry at each enable). The
// driver's PMI handler therefore edits tables only with TraceEn=0 and
// re-enables afterwards, so the CPU re-reads what it changed: grow runs for
// many PMIs with nothing lost. A handler that restores CTL first, or a CPU
// that kept its cache across the enable, runs into the old STOP guard.
import { everyPmiHandled } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

/** The `topa-cached-entries` scenario (see the file comment). */
export const topaCachedEntries: Scenario = {
  name: 'topa-cached-entries',
  checks: 'a CPU that caches ToPA entries at each enable: tables edited only with TraceEn=0 are seen after the restore; many PMIs, lossless',
  appliesTo: 'multi-entry ToPA CPUs that read the table ahead: on the model the full profile; on hardware every multi-entry ToPA CPU (caching is not enumerated)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps) ?? (env.ptUnit === 'model' && env.profile.topaCache === undefined
    ? 'the modelled CPU reads each ToPA entry when it reaches it (only the full profile caches ahead)' : undefined),
  negative: 'topa-cache-stale',
  catches: ['restore-ctl-before-refill'],
  async run(ctx) {
    const { workload, extra } = ctx.busy(40_960);
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 2 }, ...extra }, { workload });
    ctx.expect('many PMIs, each growing the cached table', r.pmis.length >= 4 && everyPmiHandled(r.pmis), `${r.pmis.length} PMIs`);
    ctx.expectLossless(r);
  },
};
