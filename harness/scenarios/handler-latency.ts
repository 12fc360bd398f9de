// handler-latency: on a lab machine the driver's PMI handler is a round trip away (NMI → helper →
// SSH → host → MSR batch), and the traced CPU keeps running meanwhile (the model's `--realism lab`:
// a millisecond of model time). A ring of fresh regions with no STOP guard (circular-fresh, 8 × 4
// KiB) would be lapped before its refill, and a top half that cleared TraceEn would leave the
// workload running untraced. The design's answer is a PMI top half, run where the PMI lands, that
// freezes the traced task until the handler is done (TargetEvent `frozen`): then nothing is
// lapped, nothing runs untraced, and the run is lossless.
import { everyPmiHandled } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

const REGION = 4096;

/** The `handler-latency` scenario (see the file comment). */
export const handlerLatency: Scenario = {
  name: 'handler-latency',
  checks: 'the CPU runs on for a remote handler\'s latency (--realism lab): the top half freezes the traced task, so an 8-region circular-fresh ring is never lapped; lossless',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell), where the model is the PT unit',
  targets: ['sim'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  sim: { realism: 'lab' },
  negative: 'top-half-no-freeze',
  async run(ctx) {
    const { workload, extra } = ctx.busy(24 * REGION);
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'circular-fresh', regionSize: REGION, regions: 8 }, ...extra }, { workload });
    ctx.expect('PMIs were taken and handled while the CPU could run on', r.pmis.length >= 2 && everyPmiHandled(r.pmis), `${r.pmis.length} PMIs: ${r.pmis.map((p) => p.action).join(',')}`);
    ctx.expectLossless(r);
  },
};
