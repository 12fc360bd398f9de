// xsaves-pending-pmi: a ToPA PMI still pending when the context is saved with
// XSAVES (docs/sdm/output.md §7.3–§7.4, docs/sdm/xsave.md): with PMI preservation the
// PMI survives the switch (PendTopaPMI in the saved STATUS) and is handled
// after XRSTORS; nothing is lost and PendTopaPMI ends at 0.
import { IA32_RTIT_STATUS } from '../../driver/hw/msrs.js';
import { everyPmiHandled, topa } from './kit/helpers.js';
import { OtherContext } from './kit/other-context.js';
import { firstSkip, needs, type Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

/** The `xsaves-pending-pmi` scenario (see the file comment). */
export const xsavesPendingPmi: Scenario = {
  name: 'xsaves-pending-pmi',
  checks: 'a PMI pending across an XSAVES/XRSTORS switch is delivered after the restore with PendTopaPMI=1 and handled; lossless',
  appliesTo: 'CPUs with XSAVES of PT state and PMI preservation: the full profile, bare metal',
  targets: ['sim', 'ssh'],
  skip: (env) => firstSkip(needsMultiEntryTopa(env.caps), needs(env.caps.xsaves && env.caps.xssPtState, 'XSAVES of PT state (CPUID.(0DH,1):EAX[3], ECX[8])'),
    needs(env.caps.pmiPreservation, 'PSB and PMI preservation (CPUID.(14H,0):EBX[6])')),
  negative: 'no-pmi-preservation',
  async run(ctx) {
    const { workload, extra } = ctx.busy(24_576);
    const other = new OtherContext(ctx);
    const r = await ctx.trace(topa('grow', 3, { switching: 'xsaves', InjectPsbPmiOnEnable: true, ...extra }), { workload, sliceBranches: 64, intercept: other.intercept });
    await other.finish();
    // In the transcript: slice → … → xrstors → pmi. The PMI arrived across the switch.
    const lines = ctx.target.lines;
    const across = lines.filter((l, i) => l.op === 'pmi' && lines.slice(0, i).reverse().find((x) => x.op === 'xrstors' || x.op === 'slice' || x.op === 'pmi' || x.op === 'start')?.op === 'xrstors');
    ctx.expect('a PMI was delivered right after an XRSTORS (pending across the switch)', across.length > 0, `${across.length} of ${r.pmis.length} PMIs`);
    const pend = across.map((l) => /status=(0x[0-9a-f]+)/.exec(l.result ?? '')?.[1]).map((s) => (s ? IA32_RTIT_STATUS.decode(BigInt(s)).PendTopaPMI : false));
    ctx.expect('those PMIs carried PendTopaPMI=1 (preserved through XSAVES)', pend.length > 0 && pend.every(Boolean), pend.join(','));
    // A PMI whose INT region filled just before the final disable is settled by the final stop.
    ctx.expect('every PMI was handled (or settled at the final stop)', r.pmis.length > 0 && everyPmiHandled(r.pmis), r.pmis.map((p) => p.action).join(','));
    ctx.expectEqual('PendTopaPMI is 0 at the end', IA32_RTIT_STATUS.decode(r.final.status).PendTopaPMI, false);
    ctx.expectLossless(r);
  },
};
