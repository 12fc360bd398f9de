// pmi-preservation: PSB and PMI preservation (docs/sdm/output.md §7.4; CPUID.(14H,0)
// :EBX[6]; CTL.InjectPsbPmiOnEnable): a PMI taken while the context is
// switched out (TraceEn=0) is ignored and PendTopaPMI stays 1; tracing enabled
// again re-raises the PMI, and handling it with TraceEn=1 clears PendTopaPMI.
// Where the CPU can XSAVES PT state, the switch out is a real XSAVES (which
// saves PendTopaPMI in the area) and the switch in an XRSTORS; elsewhere a
// plain CTL write stands in for it.
import { IA32_RTIT_STATUS } from '../../driver/hw/msrs.js';
import { topa } from './kit/helpers.js';
import { needs, type Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

const CTL = 0x570, STATUS = 0x571, GLOBAL_STATUS = 0x38e;
const TOPA_PMI = 1n << 55n; // IA32_PERF_GLOBAL_STATUS[55] (docs/sdm/msrs.md §11)

/** The `pmi-preservation` scenario (see the file comment). */
export const pmiPreservation: Scenario = {
  name: 'pmi-preservation',
  checks: 'PMI preservation: a PMI with TraceEn=0 is ignored, PendTopaPMI kept; re-raised at enable; cleared when handled',
  appliesTo: 'CPUs enumerating PMI preservation (CPUID.(14H,0):EBX[6]): the full profile, bare metal; never a KVM guest',
  targets: ['sim', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps) ?? needs(env.caps.pmiPreservation, 'PSB and PMI preservation (CPUID.(14H,0):EBX[6])'),
  negative: 'no-pmi-preservation',
  catches: ['skip-pend-clear'],
  async run(ctx) {
    const t = ctx.target;
    let pendAfterIgnore: boolean | undefined, ackedAfterIgnore: boolean | undefined;
    const viaXsaves = ctx.env.caps.xsaves && ctx.env.caps.xssPtState;
    const { workload, extra } = ctx.busy(24_576);
    const r = await ctx.trace(topa('grow', 3, { InjectPsbPmiOnEnable: true, ...(viaXsaves ? { switching: 'xsaves' } : {}), ...extra }), {
      workload,
      intercept: async (ev, s) => {
        if (ev.kind !== 'pmi' || pendAfterIgnore !== undefined) return false;
        // The context is switched out before the handler runs: TraceEn=0.
        const ctl = await t.rdmsr(0, CTL);
        if (viaXsaves) await s.switchOut();
        else await t.wrmsr(0, CTL, ctl & ~1n);
        const now = { ...ev, globalStatus: await t.rdmsr(0, GLOBAL_STATUS), ctl: await t.rdmsr(0, CTL), status: await t.rdmsr(0, STATUS) };
        await s.onEvent(now);
        pendAfterIgnore = IA32_RTIT_STATUS.decode(await t.rdmsr(0, STATUS)).PendTopaPMI;
        ackedAfterIgnore = (await t.rdmsr(0, GLOBAL_STATUS) & TOPA_PMI) === 0n;
        // Switched back in: TraceEn=1 re-raises the pended PMI (§7.4 step 3).
        if (viaXsaves) await s.switchIn();
        else await t.wrmsr(0, CTL, ctl);
        return true;
      },
    });
    if (viaXsaves) {
      const saved = t.lines.find((l) => l.op === 'xsaves')?.area?.IA32_RTIT_STATUS;
      ctx.expect('XSAVES saved PendTopaPMI=1 in the area', saved !== undefined && IA32_RTIT_STATUS.decode(BigInt(saved)).PendTopaPMI, `saved STATUS ${saved ?? 'missing'}`);
    }
    ctx.expectEqual('the PMI taken with TraceEn=0 was ignored, then the re-raised one handled', r.pmis.slice(0, 2).map((p) => p.action), ['ignored-preserved', 'handled']);
    ctx.expectEqual('PendTopaPMI stayed 1 after the ignored PMI', pendAfterIgnore, true);
    ctx.expectEqual('GLOBAL_STATUS[55] was acknowledged by the ignoring handler', ackedAfterIgnore, true);
    ctx.expectEqual('PendTopaPMI is 0 at the end', IA32_RTIT_STATUS.decode(r.final.status).PendTopaPMI, false);
    ctx.expectLossless(r);
  },
};
