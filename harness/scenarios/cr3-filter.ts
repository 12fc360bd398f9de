// cr3-filter: CR3 filtering (docs/sdm/README.md §2 ContextEn; docs/sdm/msrs.md §7):
// with CTL.CR3Filter=1 only code running under CR3 = CR3_MATCH is traced; a
// MOV CR3 to another address space stops the trace (ContextEn := 0).
import { anyOutput, linesOf } from './kit/helpers.js';
import { needs, type Scenario } from './kit/scenario.js';

/** The CR3 the sim runs workloads under (harness/sim/exec/engine.ts DEFAULT_CR3). */
const WORKLOAD_CR3 = 0x1000n;
const CR3_MATCH = 0x572;

/** The `cr3-filter` scenario (see the file comment). */
export const cr3Filter: Scenario = {
  name: 'cr3-filter',
  checks: 'CR3 filter: tracing stops at the first MOV CR3 away from CR3_MATCH; fewer branches traced; flow = truth',
  appliesTo: 'CPUs with CR3 filtering (CPUID.(14H,0):EBX[0]); the sim (CR3 switches are model-only events)',
  targets: ['sim'],
  skip: (env) => needs(env.caps.cr3Filtering, 'CR3 filtering (CPUID.(14H,0):EBX[0])'),
  negative: 'ignore-cr3filter',
  async run(ctx) {
    const w = ctx.workload({ cr3Switches: 3 });
    const r = await ctx.trace(anyOutput(ctx.env.caps.topaMultipleEntries, { CR3_MATCH: WORKLOAD_CR3 }, w), { workload: w });
    ctx.expectEqual('CR3_MATCH was programmed with the workload CR3', linesOf(ctx.target.lines, 'wrmsr', CR3_MATCH).map((l) => l.value), ['0x1000']);
    const first = Math.min(...w.model.annotations.filter((a) => a.kind === 'cr3').map((a) => a.at));
    const traced = ctx.sim!.truthLog(0)?.branches() ?? 0;
    // Branches 0..first retire under the matching CR3; the MOV CR3 after branch `first` ends ContextEn for good
    // (the generated CR3 values are never 0x1000).
    ctx.expectEqual('exactly the branches before the first CR3 switch were traced', traced, first + 1);
    // The MOV CR3 is a model-only event: the image has no instruction for the suppressed TIP.PGD to bind
    // to, so `ptlab flow` walks on to the next one that can take it. Up to the switch, flow and truth agree.
    ctx.expectLossless(r, { partial: true });
    ctx.expectFlowEqualsTruth('ptlab flow agrees with truth.jsonl up to the CR3 switch', 'until-disable');
  },
};
