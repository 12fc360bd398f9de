// ip-filter: IP filtering with ADDR0_CFG=1 (docs/sdm/README.md §4.1–§4.2): only
// instructions whose first byte lies in [ADDR0_A, ADDR0_B] are traced;
// tracing starts and stops at taken branches into and out of the range.
// The range ends just below the median of the addresses the workload's taken
// branches jump to (its model is known on every target): some jump into the
// range and some out of it, so traced and filtered branches exist whatever
// the seed (a boundary crossed only by falling through is never noticed).
import { anyOutput, records, takenBranchTargets } from './kit/helpers.js';
import { needs, type Scenario } from './kit/scenario.js';

/** The `ip-filter` scenario (see the file comment). */
export const ipFilter: Scenario = {
  name: 'ip-filter',
  checks: 'IP filter range below the median taken-branch target: every traced branch lies inside it; some are filtered out; flow = truth',
  appliesTo: 'CPUs with IP filtering (CPUID.(14H,0):EBX[2], at least one range)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needs(env.caps.ipFiltering && env.caps.numAddressRanges > 0, 'IP filtering (CPUID.(14H,0):EBX[2])'),
  negative: 'ignore-addr-cfg',
  async run(ctx) {
    const w = ctx.workload({ where: (x) => takenBranchTargets(x).length >= 2 });
    const targets = takenBranchTargets(w);
    const a = w.base, b = BigInt(targets[targets.length >> 1]!) - 1n;
    ctx.figure('filterRangeEnd', `0x${b.toString(16)}`);
    const r = await ctx.trace(anyOutput(ctx.env.caps.topaMultipleEntries, { ranges: [{ role: 'filter', a, b }] }, w), { workload: w });
    const inside = (v: string | undefined): boolean => v !== undefined && BigInt(v) >= a && BigInt(v) <= b;
    const recs = records(ctx.sim?.truth(0) ?? []);
    const branches = recs.filter((x) => x.ip !== undefined && x.kind !== 'enable' && x.kind !== 'disable');
    // FilterEn changes on taken branches (target IP) and at enable (docs/sdm/README.md §4.2); falling through
    // the range boundary is noticed only at the next taken branch.
    const enables = recs.filter((x) => x.kind === 'enable');
    ctx.expect('tracing (re)starts only inside the range', enables.length > 0 && enables.every((x) => inside(x.ip)), `${enables.length} enable records`);
    const leaving = recs.flatMap((x, i) => (x.to !== undefined && !inside(x.to) && (x.kind !== 'jcc' || x.taken) ? [i] : []));
    const open = leaving.filter((i) => recs[i + 1]?.kind !== 'disable');
    ctx.expectEqual('every taken branch that leaves the range ends tracing', open.map((i) => recs[i]), []);
    ctx.expect('branches outside the range were filtered out', branches.length > 0 && branches.length < w.model.branchCount, `${branches.length} of ${w.model.branchCount} traced`);
    ctx.expectLossless(r, { partial: true });
  },
};
