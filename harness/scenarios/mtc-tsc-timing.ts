// mtc-tsc-timing: TSCEn and MTCEn (docs/sdm/msrs.md §3.1–§3.2; docs/sdm/packets.md
// §3.9–§3.10): a TSC packet in every PSB+, MTC packets at the chosen period,
// TSC values that never go backwards, and (sim) flow --time within its tolerance of the
// truth's times (docs/sdm/packets.md §13.1).
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { joinU64, PacketKind } from '../../driver/decode/record.js';
import { anyOutput, firstPsb, packetStats } from './kit/helpers.js';
import { needs, type Scenario } from './kit/scenario.js';

const MTC_FREQ = 3;

/** The `mtc-tsc-timing` scenario (see the file comment). */
export const mtcTscTiming: Scenario = {
  name: 'mtc-tsc-timing',
  checks: 'TSCEn + MTCEn (MTCFreq=3): a TSC in every PSB+, MTC packets present, TSC values non-decreasing; flow = truth; flow --time within tolerance of truth (sim)',
  appliesTo: 'CPUs with MTC (CPUID.(14H,0):EBX[3], L14.1.EAX[19])',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needs(env.caps.mtc && ((env.caps.mtcPeriods >>> MTC_FREQ) & 1) === 1, 'MTC with MTCFreq=3 (CPUID.(14H,0):EBX[3], CPUID.(14H,1):EAX[19])'),
  negative: 'ignore-timing',
  async run(ctx) {
    const r = await ctx.trace(anyOutput(ctx.env.caps.topaMultipleEntries, { TSCEn: true, MTCFreq: MTC_FREQ }));
    const st = packetStats(r.stream);
    ctx.expect('a TSC packet for every PSB', (st.count.tsc ?? 0) >= (st.count.psb ?? 0) && (st.count.psb ?? 0) > 0, `${st.count.tsc ?? 0} TSC, ${st.count.psb ?? 0} PSB`);
    ctx.expect('MTC packets were emitted', (st.count.mtc ?? 0) > 0, `${st.count.mtc ?? 0} MTC`);
    const tscs: bigint[] = [];
    const d = new PacketDecoder(r.stream.subarray(Math.max(0, firstPsb(r.stream))));
    while (d.next()) if (d.record.kind === PacketKind.tsc) tscs.push(joinU64(d.record.lo, d.record.hi));
    const back = tscs.findIndex((v, i) => i > 0 && v < tscs[i - 1]!);
    ctx.expect('TSC values never go backwards', tscs.length > 0 && back < 0, back < 0 ? `${tscs.length} TSC values` : `TSC ${back} goes back`);
    ctx.expectLossless(r);
    ctx.expectTimesFollowTruth(r, { MTCFreq: MTC_FREQ });
  },
};
