// tracestop: a TraceStop range (ADDRn_CFG=2; docs/sdm/README.md §4.4): the first
// taken branch that lands in the range sets STATUS.Stopped, emits TIP.PGD and
// a TraceStop packet, and nothing is traced afterwards.
import { anyOutput, branchRecords, packetStats } from './kit/helpers.js';
import { truthLines } from '../sim/workload/index.js';
import { needs, type Scenario } from './kit/scenario.js';

/** The `tracestop` scenario (see the file comment). */
export const tracestop: Scenario = {
  name: 'tracestop',
  checks: 'TraceStop range on a mid-path branch target: the trace ends at the first branch landing there; Stopped=1; a TraceStop packet',
  appliesTo: 'CPUs with IP filtering and TraceStop (CPUID.(14H,0):EBX[2])',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needs(env.caps.ipFiltering && env.caps.numAddressRanges > 0, 'IP filtering and TraceStop (CPUID.(14H,0):EBX[2])'),
  negative: 'ignore-addr-cfg',
  async run(ctx) {
    const w = ctx.workload();
    // The full path (workload model), and a taken branch's target from its middle.
    const path = branchRecords(truthLines(w.model)).filter((x) => x.to !== undefined);
    const pick = path.slice(Math.floor(path.length / 2)).find((x) => x.kind !== 'jcc' || x.taken)!;
    const target = BigInt(pick.to!);
    const firstHit = path.findIndex((x) => x.to === pick.to && (x.kind !== 'jcc' || x.taken));
    const r = await ctx.trace(anyOutput(ctx.env.caps.topaMultipleEntries, { ranges: [{ role: 'tracestop', a: target, b: target }] }, w), { workload: w });
    ctx.expectEqual('STATUS.Stopped=1 at the end', r.final.stopped, true);
    ctx.expectEqual('one TraceStop packet', packetStats(r.stream).count.stop ?? 0, 1);
    const traced = ctx.sim?.truthLog(0)?.branches() ?? 0;
    ctx.expectEqual(`the trace ends at the first branch landing at 0x${target.toString(16)}`, traced, firstHit + 1);
    ctx.expectLossless(r, { partial: true });
  },
};
