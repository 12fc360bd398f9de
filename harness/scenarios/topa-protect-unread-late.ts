// topa-protect-unread-late: the protect-unread ring with a reader that is
// always late (Linux perf's reason for the markers; docs/sdm/output.md §4.4, §7.1,
// §7.2). Every ToPA PMI is held back until the CPU has stopped: it filled the
// ring up to the STOP+INT entry just before the unread data and wrote nothing
// over it. Each late handler must then find STATUS.Stopped=1 at that full
// entry, record one "stop" loss, copy out what the ring held, re-arm the ring
// past the full entry (the CPU's next region is the first one it read) and
// resume tracing. Nothing the reader had not read may be overwritten: every
// collected byte decodes, and the flow before the first gap is the CPU's.
import { imbalance } from '../../driver/collect/ledger.js';
import { IA32_RTIT_STATUS } from '../../driver/hw/msrs.js';
import type { TargetEvent } from '../../driver/target.js';
import { everyPmiHandled } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';
import { K, misplacedMarkers, REGION } from './topa-protect-unread.js';

/** The `topa-protect-unread-late` scenario (see the file comment). */
export const topaProtectUnreadLate: Scenario = {
  name: 'topa-protect-unread-late',
  checks: 'ToPA protect-unread ring with a late reader: the CPU stops before unread data; each late handler records the "stop", re-arms past the full entry, and tracing resumes',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-topa-stop-status',
  catches: ['restore-ctl-before-pointers'],
  async run(ctx) {
    const { workload, extra } = ctx.busy(12 * K * REGION);
    const from = ctx.target.lines.length;
    let held: TargetEvent | undefined, late = 0;
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'protect-unread', regionSize: REGION, regions: K }, ...extra }, {
      workload,
      sliceBranches: 500,
      // A PMI waits until a preemption point finds the CPU stopped (or the workload exits). Where perf
      // unmasks LVTPC at once (--realism lab), more PMIs come meanwhile: a late reader is late for
      // them too, and the held one stands for all of them (one interrupt for several INT regions).
      intercept: async (ev, s) => {
        if (ev.kind === 'pmi') { held ??= ev; return true; }
        if (!held || (ev.kind !== 'slice' && ev.kind !== 'exit')) return ev.kind === 'slice';
        if (ev.kind === 'slice' && !IA32_RTIT_STATUS.decode(await ctx.target.rdmsr(0, IA32_RTIT_STATUS.address)).Stopped) return true;
        if (ev.kind === 'slice') late++;
        const pmi = held;
        held = undefined;
        await s.onEvent(pmi);
        return ev.kind === 'slice';
      },
    });
    const handled = r.pmis.filter((p) => p.action === 'handled');
    ctx.expect('the reader was late at least twice, and each late handler found the CPU stopped at the full STOP+INT entry',
      late >= 2 && handled.length >= late && handled.slice(0, late).every((p) => p.stopped), `${late} late handlers; records ${handled.map((p) => (p.stopped ? 'S' : '-')).join('')}`);
    ctx.expect('every PMI was handled', everyPmiHandled(r.pmis), r.pmis.map((p) => p.action).join(','));
    const stops = r.ledger.lost.filter((l) => l.reason === 'stop');
    ctx.expectEqual('one "stop" loss per stop a handler or the final stop found, each at a region boundary',
      [stops.length, stops.every((l) => l.at % REGION === 0 && l.bytes === null)], [handled.filter((p) => p.stopped).length + (r.final.stopped ? 1 : 0), true]);
    ctx.expectEqual('the ledger balances', imbalance(r.ledger), 0);
    const bad = misplacedMarkers(ctx.target.lines.slice(from));
    ctx.expect('after every refill: STOP+INT on the entry before unread data, INT half a ring ahead', bad.length === 0, bad.length ? bad.slice(0, 2).join('; ') : `${handled.length} refills`);
    const first = stops[0]?.at ?? 0;
    ctx.expect('tracing resumed after each stop: the ring went round again after the first gap', r.stream.length >= first + K * REGION,
      `${r.stream.length} bytes collected, the first gap at ${first}`);
    ctx.expectFlowEqualsTruth('ptlab flow up to the first stop gap is a prefix of truth.jsonl', 'prefix');
  },
};
