// err-write-while-enabled: while TraceEn=1 only IA32_RTIT_CTL may be written;
// every other RTIT MSR raises #GP (docs/sdm/msrs.md §9 rule G3).
import { TraceSession } from '../../driver/session.js';
import { anyOutput } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';

const CTL = 0x570, STATUS = 0x571, OUTPUT_BASE = 0x560, MASK_PTRS = 0x561, CR3_MATCH = 0x572, ADDR0_A = 0x580;

/** The `err-write-while-enabled` scenario (see the file comment). */
export const errWriteWhileEnabled: Scenario = {
  name: 'err-write-while-enabled',
  checks: 'with TraceEn=1, WRMSR of STATUS, OUTPUT_BASE, OUTPUT_MASK_PTRS, CR3_MATCH, ADDR0_A raises #GP; CTL itself may be written',
  appliesTo: 'every CPU with ToPA output',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => (env.caps.topaOutput ? undefined : 'the CPU does not enumerate ToPA output (CPUID.(14H,0):ECX[0])'),
  negative: 'swallow-gp',
  async run(ctx) {
    const t = ctx.target, caps = ctx.env.caps;
    const s = await TraceSession.open(t, anyOutput(caps.topaMultipleEntries), ctx.sessionOptions());
    ctx.probed = s.probed;
    try {
      await s.start();
      // OUTPUT_BASE is written with the table it already holds: had a CPU taken the write after all,
      // PT would still write only into the run's own memory, never at some other physical address.
      const cases: [string, number, bigint][] = [
        ['IA32_RTIT_STATUS', STATUS, 0n],
        ['IA32_RTIT_OUTPUT_BASE', OUTPUT_BASE, await t.rdmsr(0, OUTPUT_BASE)],
        ['IA32_RTIT_OUTPUT_MASK_PTRS', MASK_PTRS, 0x7fn],
      ];
      if (caps.cr3Filtering) cases.push(['IA32_RTIT_CR3_MATCH', CR3_MATCH, 0x1000n]);
      if (caps.ipFiltering && caps.numAddressRanges > 0) cases.push(['IA32_RTIT_ADDR0_A', ADDR0_A, 0x1000_0000n]);
      for (const [name, msr, value] of cases) {
        const before = await t.rdmsr(0, msr);
        await ctx.expectGp(`#GP on WRMSR ${name} with TraceEn=1`, () => t.wrmsr(0, msr, value));
        // STATUS reads may be stale while tracing (docs/sdm/msrs.md §4): compare the others only.
        if (msr !== STATUS) ctx.expectEqual(`${name} is unchanged`, await t.rdmsr(0, msr), before);
      }
      const ctl = await t.rdmsr(0, CTL);
      let ok = true, detail = 'accepted';
      try { await t.wrmsr(0, CTL, ctl); } catch (e) { ok = false; detail = (e as Error).message; }
      ctx.expect('WRMSR IA32_RTIT_CTL with TraceEn=1 is allowed', ok, detail);
      ctx.result = await s.stop(() => (ctx.sim ? { written: ctx.sim.written(0), dropped: ctx.sim.dropped(0) } : {}));
    } finally {
      await s.release();
    }
  },
};
