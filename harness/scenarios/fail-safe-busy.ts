// fail-safe-busy: a CPU someone else is tracing on is never reprogrammed
// (the fail safe of Linux's PT driver: if IA32_RTIT_CTL.TraceEn is already 1,
// another agent — a hypervisor, a debugger, a second driver — owns PT). The
// second driver reads CTL, refuses with a typed error before any WRMSR, and
// the first trace goes on untouched to a lossless end.
import { TraceSession } from '../../driver/session.js';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { anyOutput } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';

/** The `fail-safe-busy` scenario (see the file comment). */
export const failSafeBusy: Scenario = {
  name: 'fail-safe-busy',
  checks: 'a second driver refuses (pt_busy, no WRMSR) to program a CPU whose TraceEn is already 1; the first trace is untouched',
  appliesTo: 'every CPU with ToPA output',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => (env.caps.topaOutput ? undefined : 'the CPU does not enumerate ToPA output (CPUID.(14H,0):ECX[0])'),
  negative: 'ctl-hides-traceen',
  catches: ['no-fail-safe'],
  async run(ctx) {
    const t = ctx.target;
    const req = anyOutput(ctx.env.caps.topaMultipleEntries);
    let ctlBefore = 0n;
    const r = await ctx.trace(req, {
      // Once the first trace runs, a second driver tries to take the CPU.
      intercept: async (ev) => {
        if (ev.kind !== 'exit') return false;
        ctlBefore = await t.rdmsr(0, IA32_RTIT_CTL.address);
        await ctx.expectRefused('the second driver refuses: TraceEn is already 1', 'pt_busy', async () => {
          const intruder = await TraceSession.open(t, req, ctx.sessionOptions());
          await intruder.release();
        });
        ctx.expectEqual('IA32_RTIT_CTL is untouched', await t.rdmsr(0, IA32_RTIT_CTL.address), ctlBefore);
        return false;
      },
    });
    ctx.expect('the first trace was running (TraceEn=1) when the second driver came', IA32_RTIT_CTL.decode(ctlBefore).TraceEn, `CTL 0x${ctlBefore.toString(16)}`);
    ctx.expectLossless(r);
  },
};
