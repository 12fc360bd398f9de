// pmi-at-final-stop: the run is stopped while a ToPA PMI is still unhandled
// (docs/sdm/output.md §7.2, §7.4; docs/sdm/msrs.md §11): its INT region filled, the
// CPU raised GLOBAL_STATUS[55] (and, with PMI preservation, PendTopaPMI), and
// the stop request came first — as when a traced process exits or a user
// stops tracing during the PMI's skid. The final stop must settle it: collect
// the region with the rest, clear PendTopaPMI, acknowledge [55] and unmask the
// LVT, so the next user of the CPU inherits no stale PMI.
import { IA32_PERF_GLOBAL_STATUS, IA32_RTIT_STATUS } from '../../driver/hw/msrs.js';
import { LVT_MASK } from '../../driver/hw/lvt.js';
import { topa } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

/** The `pmi-at-final-stop` scenario (see the file comment). */
export const pmiAtFinalStop: Scenario = {
  name: 'pmi-at-final-stop',
  checks: 'stop with a ToPA PMI unhandled: the final stop settles it (PendTopaPMI and GLOBAL_STATUS[55] clear) and collects its region; lossless',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell); PMI preservation where enumerated',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-topa-pmi',
  catches: ['skip-final-settle'],
  async run(ctx) {
    const preserve = ctx.env.caps.pmiPreservation;
    const { workload, extra } = ctx.busy(24_576);
    let pending = false;
    const r = await ctx.trace(topa('grow', 3, { ...extra, ...(preserve ? { InjectPsbPmiOnEnable: true } : {}) }), {
      workload,
      // The first ToPA PMI is not handed to the handler: the stop comes first.
      intercept: async (ev) => {
        if (ev.kind !== 'pmi' || !IA32_PERF_GLOBAL_STATUS.decode(ev.globalStatus).Trace_ToPA_PMI) return false;
        pending = true;
        return 'stop';
      },
    });
    ctx.expect('a ToPA PMI was pending when the run was stopped', pending, pending ? 'yes' : 'the CPU raised no ToPA PMI');
    ctx.expectEqual('the final stop settled it', r.pmis.map((p) => p.action), ['final-stop']);
    const global = await ctx.target.rdmsr(0, IA32_PERF_GLOBAL_STATUS.address);
    ctx.expectEqual('GLOBAL_STATUS[55] is clear after the stop', IA32_PERF_GLOBAL_STATUS.decode(global).Trace_ToPA_PMI, false);
    const status = await ctx.target.rdmsr(0, IA32_RTIT_STATUS.address);
    ctx.expectEqual('the run\'s final STATUS is the one the CPU has after the settle', r.final.status, status);
    if (preserve) ctx.expectEqual('PendTopaPMI is clear after the stop', IA32_RTIT_STATUS.decode(status).PendTopaPMI, false);
    if (ctx.sim) {
      // The CPU masked the LVT entry when it delivered the PMI; the next user of the CPU must get it unmasked.
      ctx.expectEqual('the LVT performance-monitor entry is unmasked after the stop', (ctx.sim.unit(0).lvtPmi & LVT_MASK) === 0n, true);
    }
    ctx.expect('the INT region and the bytes after it were collected', r.stream.length > 2 * 4096, `${r.stream.length} bytes`);
    ctx.expectLossless(r, { partial: true });
  },
};
