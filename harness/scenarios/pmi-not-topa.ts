// pmi-not-topa: the performance-monitoring interrupt is shared (docs/sdm/msrs.md
// §11): a PMI whose IA32_PERF_GLOBAL_STATUS has bit 55 clear belongs to
// someone else, e.g. a counter overflow (Ovf_PMC bit 0). The driver's handler
// must leave it alone: no MSR access, no table or STATUS change, tracing not
// stopped, nothing acknowledged (the counter's owner acknowledges its bit).
// Such a PMI is handed to the session in the middle of a trace run that also
// takes real ToPA PMIs; the run stays lossless.
import { IA32_PERF_GLOBAL_STATUS } from '../../driver/hw/msrs.js';
import { everyPmiHandled } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

/** The `pmi-not-topa` scenario (see the file comment). */
export const pmiNotTopa: Scenario = {
  name: 'pmi-not-topa',
  checks: 'a PMI with GLOBAL_STATUS[55] clear (a counter overflow) mid-run: the handler makes no target access and records "not-topa"; the ToPA PMIs are handled; lossless',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-topa-pmi',
  catches: ['invert-not-topa'],
  async run(ctx) {
    const { workload, extra } = ctx.busy(16_384);
    const t = ctx.target;
    let injected: { readonly lines: number; readonly action: string | undefined } | undefined;
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 }, ...extra }, {
      workload,
      sliceBranches: 500,
      intercept: async (ev, s) => {
        if (ev.kind !== 'slice' || injected) return false;
        const [ctl, status] = await Promise.all([t.rdmsr(0, 0x570), t.rdmsr(0, 0x571)]);
        const line0 = t.lines.length, n0 = s.pmis.length;
        await s.onEvent({ kind: 'pmi', cpu: 0, globalStatus: IA32_PERF_GLOBAL_STATUS.encode({ Ovf_PMC: 1 }), ctl, status, acked: false, traceEnCleared: false });
        injected = { lines: t.lines.length - line0, action: s.pmis[n0]?.action };
        return false;
      },
    });
    ctx.expectEqual('the counter-overflow PMI was recorded as not a ToPA PMI, with no target access at all',
      injected && [injected.action, injected.lines], ['not-topa', 0]);
    const topa = r.pmis.filter((p) => p.action !== 'not-topa');
    ctx.expect('the run\'s ToPA PMIs were all handled', topa.length >= 2 && everyPmiHandled(topa), r.pmis.map((p) => p.action).join(','));
    ctx.expectLossless(r);
  },
};
