// topa-stop: a ToPA STOP entry (docs/sdm/output.md §4.4, §7.2): when the PMI
// handler runs too late, the CPU fills the STOP guard region completely, sets
// STATUS.Stopped and writes nothing more; the late handler finds Stopped=1 at
// the full STOP entry, records a "stop" loss and moves past it. A second run
// never handles the PMI before the end: the final stop finds the CPU stopped
// at the full STOP region, and collection records the same one "stop" loss.
import { IA32_RTIT_STATUS } from '../../driver/hw/msrs.js';
import { imbalance } from '../../driver/collect/ledger.js';
import type { TargetEvent } from '../../driver/target.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

/** The `topa-stop` scenario (see the file comment). */
export const topaStop: Scenario = {
  name: 'topa-stop',
  checks: 'ToPA STOP: with the PMI handled late, output stops once the STOP region is full; Stopped=1; a "stop" loss',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-topa-stop-status',
  catches: ['restore-ctl-before-pointers'],
  async run(ctx) {
    const { workload: w, extra } = ctx.busy(24_576);
    let held: TargetEvent | undefined, lateAt: string | undefined;
    // grow with 3 regions: INT on region 1, STOP on region 2 (the guard). The first PMI is held back
    // until the CPU has stopped at the full STOP region (seen at a later preemption point): the
    // handler "runs too late". It must then move past the STOP region and clear Stopped, so the
    // trace resumes after a "stop" gap.
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 }, ...extra }, {
      workload: w,
      sliceBranches: 1000,
      intercept: async (ev, s) => {
        if (ev.kind === 'pmi' && !held && lateAt === undefined) { held = ev; return true; }
        if (!held || (ev.kind !== 'slice' && ev.kind !== 'exit')) return ev.kind === 'slice';
        if (ev.kind === 'slice' && !IA32_RTIT_STATUS.decode(await ctx.target.rdmsr(0, IA32_RTIT_STATUS.address)).Stopped) return true;
        lateAt = ev.kind;
        await s.onEvent(held);
        held = undefined;
        return ev.kind === 'slice';
      },
    });
    ctx.expectEqual('the late handler found STATUS.Stopped=1 at the full STOP entry, and no handler after it', r.pmis.map((p) => p.stopped), r.pmis.map((_, i) => i === 0));
    const stops = r.ledger.lost.filter((l) => l.reason === 'stop');
    ctx.expectEqual('all 3 regions, the STOP region included, were filled: one "stop" loss at 3 × 4 KiB', stops.map((l) => [l.at, l.bytes]), [[3 * 4096, null]]);
    ctx.expectEqual('the ledger balances', imbalance(r.ledger), 0);
    ctx.expectEqual('the late handler ran while the workload still ran (at a preemption point, not at the exit)', lateAt, 'slice');
    ctx.expect('tracing resumed after the stop gap: bytes were collected after it', r.stream.length > 3 * 4096, `${r.stream.length} bytes collected, the gap at ${3 * 4096}`);
    // Run 2: the PMI never gets a handler before the workload ends, so only the final stop finds the
    // CPU stopped at the full STOP region: the same single "stop" loss, recorded by collection.
    const before = ctx.sim?.truthLog(0)?.length ?? 0;
    ctx.truthFilter = { from: before };
    const r2 = await ctx.trace({ output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 }, ...extra }, {
      workload: w,
      intercept: async (ev) => ev.kind === 'pmi',
    });
    ctx.expectEqual('run 2 (no handler before the end): STATUS.Stopped=1 at the final stop', r2.final.stopped, true);
    ctx.expectEqual('run 2: one "stop" loss at 3 × 4 KiB, found at the final stop', r2.ledger.lost.map((l) => [l.at, l.bytes, l.reason]), [[3 * 4096, null, 'stop']]);
    ctx.expectEqual('run 2: the ledger balances', imbalance(r2.ledger), 0);
    ctx.expectFlowEqualsTruth('ptlab flow of run 2 up to the stop gap is a prefix of truth.jsonl', 'prefix');
  },
};
