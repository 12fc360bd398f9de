// dis-tnt: CTL.DisTNT=1 (docs/sdm/msrs.md §3.1 bit 55; CPUID.(14H,0):EBX[8]): no
// TNT packets at all; conditional branches leave no trace, while indirect
// branches and RETs still produce TIPs. The workload is one whose path
// executes an indirect JMP or CALL, so a TIP is due whatever the seed.
import { anyOutput, executesIndirect, packetStats } from './kit/helpers.js';
import { needs, type Scenario } from './kit/scenario.js';

/** The `dis-tnt` scenario (see the file comment). */
export const disTnt: Scenario = {
  name: 'dis-tnt',
  checks: 'DisTNT=1: no TNT packet in the stream, TIPs still present',
  appliesTo: 'CPUs with TNT disable (CPUID.(14H,0):EBX[8]): Sapphire Rapids, full',
  targets: ['sim', 'ssh'],
  skip: (env) => needs(env.caps.tntDisable, 'TNT disable (CPUID.(14H,0):EBX[8])'),
  negative: 'ignore-distnt',
  async run(ctx) {
    const w = ctx.workload({ where: executesIndirect });
    const r = await ctx.trace(anyOutput(ctx.env.caps.topaMultipleEntries, { DisTNT: true }, w), { workload: w });
    const st = packetStats(r.stream);
    ctx.expectEqual('no TNT packet', (st.count['tnt.8'] ?? 0) + (st.count['tnt.64'] ?? 0), 0);
    ctx.expect('TIP packets are still emitted', (st.count.tip ?? 0) > 0, `${st.count.tip ?? 0} TIPs`);
    ctx.expectEqual('the stream decodes without errors', st.errors, 0);
    ctx.expectEqual('nothing was lost', r.ledger.lost, []);
  },
};
