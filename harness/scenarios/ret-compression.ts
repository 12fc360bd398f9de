// ret-compression: RET compression and CTL.DisRETC (docs/sdm/packets.md §7;
// docs/sdm/msrs.md §3.1 bit 11): with DisRETC=1 every near RET is a TIP, so the
// only TNT bits are those of conditional branches.
import { anyOutput, branchRecords, packetStats } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { K_RET, type GeneratedWorkload } from '../sim/workload/index.js';

/** RETs on the path of `w` (its model's branches, as truthLines would list them). */
function retsOnPath(w: GeneratedWorkload): number {
  let n = 0;
  w.model.forEachBranch((c) => { if (c.kind === K_RET) n++; });
  return n;
}

/** The `ret-compression` scenario (see the file comment). */
export const retCompression: Scenario = {
  name: 'ret-compression',
  checks: 'DisRETC=1: TNT bits = conditional branches (no RET compressed), one TIP per RET at least; flow = truth',
  appliesTo: 'every CPU (DisRETC has no CPUID gate)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => (env.caps.topaOutput ? undefined : 'the CPU does not enumerate ToPA output (CPUID.(14H,0):ECX[0])'),
  negative: 'ignore-disretc',
  async run(ctx) {
    const w = ctx.workload({ where: (x) => retsOnPath(x) >= 10 });
    const r = await ctx.trace(anyOutput(ctx.env.caps.topaMultipleEntries, { DisRETC: true }, w), { workload: w });
    const recs = branchRecords(ctx.sim?.truth(0) ?? []);
    const jcc = recs.filter((x) => x.kind === 'jcc').length, rets = recs.filter((x) => x.kind === 'ret').length;
    const st = packetStats(r.stream);
    ctx.expect('the workload returns from calls', rets > 0, `${rets} RETs`);
    ctx.expectEqual('TNT bits = conditional branches (no compressed RET)', st.tntBits, jcc);
    ctx.expect('at least one TIP per RET', (st.count.tip ?? 0) >= rets, `${st.count.tip ?? 0} TIPs for ${rets} RETs`);
    ctx.expectLossless(r);
  },
};
