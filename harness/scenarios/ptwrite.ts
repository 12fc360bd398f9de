// ptwrite: PTWRITE with CTL.PTWEn=1 (docs/sdm/packets.md §3.16, §10 "PTWRITE";
// CPUID.(14H,0):EBX[4]): one PTW packet per PTWRITE executed while traced,
// carrying its operand, in program order.
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { joinU64, PacketKind } from '../../driver/decode/record.js';
import { anyOutput, firstPsb } from './kit/helpers.js';
import { needs, type Scenario } from './kit/scenario.js';

/** The `ptwrite` scenario (see the file comment). */
export const ptwrite: Scenario = {
  name: 'ptwrite',
  checks: 'PTWEn=1: one PTW packet per PTWRITE, with its operand, in order; flow = truth',
  appliesTo: 'CPUs with PTWRITE (CPUID.(14H,0):EBX[4]): Sapphire Rapids, full; never a KVM guest; the sim (PTWRITE is model-only in the image)',
  targets: ['sim'],
  skip: (env) => needs(env.caps.ptwrite, 'PTWRITE (CPUID.(14H,0):EBX[4])') ?? needs(env.caps.topaOutput, 'ToPA output (CPUID.(14H,0):ECX[0])'),
  negative: 'ignore-ptwen',
  async run(ctx) {
    const w = ctx.workload({ ptwrites: 4 });
    const r = await ctx.trace(anyOutput(ctx.env.caps.topaMultipleEntries, { PTWEn: true }, w), { workload: w });
    const want = w.model.annotations.flatMap((a) => (a.kind === 'ptwrite' ? [a.value] : []));
    const got: bigint[] = [];
    const d = new PacketDecoder(r.stream.subarray(Math.max(0, firstPsb(r.stream))));
    while (d.next()) if (d.record.kind === PacketKind.ptw) got.push(joinU64(d.record.lo, d.record.hi));
    ctx.expect('the workload executes PTWRITEs', want.length > 0, `${want.length} PTWRITEs`);
    ctx.expectEqual('one PTW packet per PTWRITE, with its operand, in order', got, want);
    ctx.expectLossless(r);
  },
};
