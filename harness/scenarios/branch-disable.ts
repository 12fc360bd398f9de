// branch-disable: CTL.BranchEn=0 (docs/sdm/packets.md table "BranchEn=0"): no TNT,
// TIP*, branch FUP or MODE.Exec; PSB+ and timing packets still come. (A CPU with
// erratum BDM106, Broadwell, raises #GP for TraceEn=1 with BranchEn=0 and the driver
// refuses the request: the scenario skips there, by the errata of the CPU's
// signature, on the model and on a real CPU alike: docs/sdm/errata.md.)
import { familyModelName } from '../../driver/hw/cpuid.js';
import { anyOutput, packetStats } from './kit/helpers.js';
import { firstSkip, needs, type Scenario } from './kit/scenario.js';

/** The `branch-disable` scenario (see the file comment). */
export const branchDisable: Scenario = {
  name: 'branch-disable',
  checks: 'BranchEn=0: no TNT, TIP, TIP.PGE/PGD, FUP or MODE.Exec packets; PSB+ still emitted; no branch in truth',
  appliesTo: 'every ToPA CPU without erratum BDM106 (not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => firstSkip(
    env.profile.errata.has('BDM106')
      ? `erratum BDM106 of this CPU (${familyModelName(env.profile)}): IA32_RTIT_CTL with TraceEn=1 and BranchEn=0 raises #GP` : undefined,
    needs(env.caps.topaOutput, 'ToPA output (CPUID.(14H,0):ECX[0])')),
  negative: 'force-branchen',
  async run(ctx) {
    const r = await ctx.trace(anyOutput(ctx.env.caps.topaMultipleEntries, { BranchEn: false }));
    const st = packetStats(r.stream);
    const cofi = ['tnt.8', 'tnt.64', 'tip', 'tip.pge', 'tip.pgd', 'fup', 'mode.exec'].map((k) => [k, st.count[k] ?? 0] as const).filter(([, n]) => n > 0);
    ctx.expectEqual('no control-flow packets', cofi, []);
    ctx.expect('PSB+ was still emitted', (st.count.psb ?? 0) >= 1, `${st.count.psb ?? 0} PSBs`);
    ctx.expectEqual('no branch in truth.jsonl', ctx.sim?.truthLog(0)?.branches() ?? 0, 0);
    ctx.expectEqual('the stream decodes without errors', st.errors, 0);
    ctx.expectFlowEqualsTruth('ptlab flow reconstructs no branch either (flow = truth.jsonl)');
  },
};
