// err-reserved-bit: WRMSR with a reserved bit raises #GP and changes nothing
// (docs/sdm/msrs.md §3.1, §4, §5; kvm-unit-tests x86/msr.c; LKVS PT reserved-bit
// test). Reserved bits written from the spec tables by hand.
import type { Scenario } from './kit/scenario.js';

const CTL = 0x570, STATUS = 0x571, OUTPUT_BASE = 0x560;

/** The `err-reserved-bit` scenario (see the file comment). */
export const errReservedBit: Scenario = {
  name: 'err-reserved-bit',
  checks: 'WRMSR of reserved bits (CTL 18, 23, 63; STATUS 3, 8; OUTPUT_BASE ≥ MAXPHYADDR) raises #GP and leaves the MSR unchanged',
  appliesTo: 'every CPU',
  targets: ['sim', 'qemu', 'ssh'],
  skip: () => undefined,
  negative: 'swallow-gp',
  async run(ctx) {
    const t = ctx.target;
    const cases: [string, number, bigint][] = [
      ['IA32_RTIT_CTL bit 18 (RSVD)', CTL, 1n << 18n],
      ['IA32_RTIT_CTL bit 23 (RSVD)', CTL, 1n << 23n],
      ['IA32_RTIT_CTL bit 63 (RSVD)', CTL, 1n << 63n],
      ['IA32_RTIT_STATUS bit 3 (RSVD)', STATUS, 1n << 3n],
      ['IA32_RTIT_STATUS bit 8 (RSVD)', STATUS, 1n << 8n],
      [`IA32_RTIT_OUTPUT_BASE bit ${ctx.env.caps.maxPhysAddr} (≥ MAXPHYADDR)`, OUTPUT_BASE, 1n << BigInt(ctx.env.caps.maxPhysAddr)],
    ];
    for (const [name, msr, value] of cases) {
      const before = await t.rdmsr(0, msr);
      await ctx.expectGp(`#GP on ${name}`, () => t.wrmsr(0, msr, value));
      ctx.expectEqual(`${name}: the MSR is unchanged`, await t.rdmsr(0, msr), before);
    }
  },
};
