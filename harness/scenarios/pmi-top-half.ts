// pmi-top-half: a ToPA PMI whose top half already acted, as the guest
// module's NMI handler does on every real target (it acknowledges
// GLOBAL_STATUS[55] through IA32_PERF_GLOBAL_STATUS_RESET and clears TraceEn
// before the driver sees the event). The driver's handler must go on from
// there: not stop tracing again, and above all not acknowledge [55] again — a
// second write to IA32_PERF_GLOBAL_STATUS_RESET can clear the [55] of a newer
// ToPA PMI, which is then never handled (docs/sdm/msrs.md §11). On the model the
// top half is asked for; on a real target it is the module's own.
import { IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { hex } from '../../driver/base/hex.js';
import { everyPmiHandled } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

const RESET = hex(IA32_PERF_GLOBAL_STATUS_RESET.address), CTL = hex(IA32_RTIT_CTL.address);

/** The `pmi-top-half` scenario (see the file comment). */
export const pmiTopHalf: Scenario = {
  name: 'pmi-top-half',
  checks: 'PMIs whose top half acknowledged GLOBAL_STATUS[55] and cleared TraceEn (as the guest module does): no second acknowledgement, no second stop, [55] clear after each handler; lossless',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell); on real targets the module\'s NMI handler is the top half',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  sim: { topHalf: { ack: true, clearTraceEn: true } },
  negative: 'top-half-skips-ack',
  catches: ['double-ack'],
  async run(ctx) {
    const { workload, extra } = ctx.busy(24_576);
    const t = ctx.target;
    const ackedEvents: number[] = [];
    let stillRaised = 0;
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 }, ...extra }, {
      workload,
      intercept: async (ev, s) => {
        if (ev.kind !== 'pmi') return false;
        if (ev.acked) ackedEvents.push(t.lines.length - 1);
        await s.onEvent(ev);
        // The CPU is in the handler still: nothing can have raised [55] anew since the event.
        if (IA32_PERF_GLOBAL_STATUS.decode(await t.rdmsr(0, IA32_PERF_GLOBAL_STATUS.address)).Trace_ToPA_PMI) stillRaised++;
        return true;
      },
    });
    const pmis = r.pmis.filter((p) => p.action !== 'final-stop');
    ctx.expect('the CPU raised ToPA PMIs and every one was handled', pmis.length >= 2 && everyPmiHandled(r.pmis), r.pmis.map((p) => p.action).join(','));
    if (ctx.sim) {
      const flags = t.lines.filter((l) => l.op === 'pmi').map((l) => /acked=true traceEnCleared=true/.test(l.result ?? ''));
      ctx.expect('the top half acknowledged [55] and cleared TraceEn before every event', flags.length > 0 && flags.every(Boolean), `${flags.filter(Boolean).length} of ${flags.length} events`);
    }
    // Each acknowledged event's handler segment: from its pmi line to the next event.
    let acksAgain = 0, stopsAgain = 0;
    for (const at of ackedEvents) {
      const seg = t.lines.slice(at + 1);
      const end = seg.findIndex((l) => l.op === 'pmi' || l.op === 'slice' || l.op === 'exit');
      for (const l of end < 0 ? seg : seg.slice(0, end)) {
        if (l.op === 'wrmsr' && l.msr === RESET) acksAgain++;
        if (l.op === 'wrmsr' && l.msr === CTL && (BigInt(l.value!) & 1n) === 0n && /traceEnCleared=true/.test(t.lines[at]!.result ?? '')) stopsAgain++;
      }
    }
    ctx.expectEqual('no handler acknowledged [55] again, or stopped tracing again, after its top half had', [acksAgain, stopsAgain], [0, 0]);
    ctx.expectEqual('GLOBAL_STATUS[55] was clear after every handler', stillRaised, 0);
    ctx.expectLossless(r);
  },
};
