// xsaves-roundtrip: context switches with XSAVES/XRSTORS of state component 8
// (docs/sdm/xsave.md §2–§4): every switch saves and restores the whole trace
// state, so the trace goes on as if nothing happened. Between save and restore
// another context's configuration is loaded (other-context.ts), so XRSTORS must
// bring back every MSR of component 8 and load CTL last.
import { linesOf, topa } from './kit/helpers.js';
import { OtherContext } from './kit/other-context.js';
import { firstSkip, needs, type Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

/** The `xsaves-roundtrip` scenario (see the file comment). */
export const xsavesRoundtrip: Scenario = {
  name: 'xsaves-roundtrip',
  checks: 'XSAVES/XRSTORS switches every 2000 branches through another context\'s PT state: every component-8 MSR restored, CTL last; lossless; flow = truth',
  appliesTo: 'CPUs with XSAVES of PT state (CPUID.(0DH,1):EAX[3], ECX[8]); not Broadwell, not a KVM guest',
  targets: ['sim', 'ssh'],
  skip: (env) => firstSkip(needsMultiEntryTopa(env.caps), needs(env.caps.xsaves, 'XSAVES (CPUID.(0DH,1):EAX[3])'),
    needs(env.caps.xssPtState, 'XSAVES of PT state (CPUID.(0DH,1):ECX[8])')),
  negative: 'xrstors-drops-traceen',
  async run(ctx) {
    const w = ctx.workload({ minBranches: 20_000 });
    // Every address range the CPU has filters on the whole image: the trace is the same, and each
    // ADDRn is a value the restore must bring back (ADDR2/ADDR3 by hand: not in component 8).
    const n = ctx.env.caps.ipFiltering ? ctx.env.caps.numAddressRanges : 0;
    const other = new OtherContext(ctx, n);
    const ranges = Array.from({ length: n }, () => ({ role: 'filter' as const, a: w.base, b: w.base + BigInt(w.image.length) - 1n }));
    const r = await ctx.trace(topa('grow', 3, { switching: 'xsaves', ...(n ? { ranges } : {}) }), { workload: w, sliceBranches: 2000, intercept: other.intercept });
    await other.finish();
    ctx.expect('the context was switched several times', r.switches >= 5, `${r.switches} switches`);
    const xs = linesOf(ctx.target.lines, 'xsaves').length, xr = linesOf(ctx.target.lines, 'xrstors').length;
    ctx.expectEqual('one XSAVES and one XRSTORS per switch', [xs, xr], [r.switches, r.switches]);
    ctx.expectLossless(r);
  },
};
