// psb-frequency: CTL.PSBFreq (docs/sdm/msrs.md §3.2: a PSB every 2 KiB << P output
// bytes; docs/sdm/README.md Open Question 21: due when floor(PacketByteCnt /
// period) changes, emitted at the next packet boundary).
import { packetStats, singleRange } from './kit/helpers.js';
import { needs, type Scenario } from './kit/scenario.js';

const P = 1; // 4 KiB
const PERIOD = 2048 << P;
/** A PSB comes at the next packet boundary: allow a PSB+ and a long packet of slack (docs/sdm/packets.md §8). */
const SLACK = 64;

/** The `psb-frequency` scenario (see the file comment). */
export const psbFrequency: Scenario = {
  name: 'psb-frequency',
  checks: 'PSBFreq=1: consecutive PSBs are 4 KiB (± a PSB+) apart; flow = truth',
  appliesTo: 'CPUs with configurable PSB frequency (CPUID.(14H,0):EBX[1], L14.1.EBX[17]) and single-range output',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needs(env.caps.psbCyc && ((env.caps.psbPeriods >>> P) & 1) === 1, 'PSBFreq=1 (CPUID.(14H,0):EBX[1], CPUID.(14H,1):EBX[17])')
    ?? needs(env.caps.singleRangeOutput, 'single-range output (CPUID.(14H,0):ECX[2])'),
  negative: 'wrong-psbfreq',
  async run(ctx) {
    const { workload, extra } = ctx.busy(8 * PERIOD);
    const r = await ctx.trace(singleRange(1 << 20, { ...extra, PSBFreq: P }), { workload });
    const psb = packetStats(r.stream).psbOffsets;
    const gaps = psb.slice(1).map((o, i) => o - psb[i]!);
    ctx.expect('at least 8 PSBs', psb.length >= 8, `${psb.length} PSBs in ${r.stream.length} bytes`);
    const off = gaps.filter((g) => g < PERIOD - SLACK || g > PERIOD + SLACK);
    ctx.expect(`every gap between PSBs is ${PERIOD} ± ${SLACK} bytes`, off.length === 0, `gaps ${[...new Set(gaps)].slice(0, 12).join(', ')}`);
    ctx.expectLossless(r);
  },
};
