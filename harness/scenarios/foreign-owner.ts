// foreign-owner: another agent already traces on the CPU when the run starts — perf's intel_pt, a
// hypervisor, a run that crashed (the model's foreign-owner setting: its own ToPA table and ring,
// in memory the driver does not own). The CPU is not the driver's: it refuses (pt_busy) before
// any WRMSR, naming the CPU, as Linux's pt_init refuses when it finds TraceEn=1; and the other
// agent's trace goes on untouched — its MSRs as it set them, its ring still filling while the
// workload runs. A driver that scrubbed CTL first (as the runner once did before every run) or
// trusted a CTL read that hid TraceEn would take the CPU and stop the other agent's trace.
import { PtBusyError } from '../../driver/base/errors.js';
import { IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS } from '../../driver/hw/msrs.js';
import { TraceSession } from '../../driver/session.js';
import { anyOutput } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';

const OWNED = [IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS] as const;

/** The `foreign-owner` scenario (see the file comment). */
export const foreignOwner: Scenario = {
  name: 'foreign-owner',
  checks: 'another agent already traces on the CPU: the driver refuses (pt_busy, no WRMSR, the CPU named), and the agent\'s MSRs and ring go on untouched',
  appliesTo: 'every CPU with ToPA output, where the model is the PT unit (the model provides the other agent)',
  targets: ['sim'],
  skip: (env) => (env.caps.topaOutput ? undefined : 'the CPU does not enumerate ToPA output (CPUID.(14H,0):ECX[0])'),
  sim: { foreignOwner: true },
  negative: 'ctl-hides-traceen',
  catches: ['no-fail-safe'],
  async run(ctx) {
    const t = ctx.target, sim = ctx.sim!;
    const read = async (): Promise<bigint[]> => Promise.all(OWNED.map((m) => t.rdmsr(0, m.address)));
    const before = await read();
    ctx.expect('another agent traces on CPU 0 when the run starts (TraceEn=1)', IA32_RTIT_CTL.decode(before[0]!).TraceEn, `CTL 0x${before[0]!.toString(16)}`);
    let refusal: unknown;
    await ctx.expectRefused('the driver refuses the CPU: TraceEn is already 1 (pt_busy), before any WRMSR', 'pt_busy', async () => {
      try {
        const s = await TraceSession.open(t, anyOutput(ctx.env.caps.topaMultipleEntries), ctx.sessionOptions());
        await s.release();
      } catch (e) {
        refusal = e;
        throw e;
      }
    });
    ctx.expect('the refusal names the CPU and the other tracer', refusal instanceof PtBusyError && refusal.cpu === 0 && /traced by someone else/.test(refusal.message),
      refusal instanceof Error ? refusal.message : 'no refusal');
    ctx.expectEqual('the other agent\'s CTL, OUTPUT_BASE and OUTPUT_MASK_PTRS are as it set them', await read(), before);
    // The CPU goes on running (a workload of the lab's), traced by the other agent into its own ring.
    const ring0 = sim.foreignRing()!.filter((b) => b !== 0).length;
    {
      await using exec = t.start(ctx.workload(), 0);
      for await (const ev of exec.events) if (ev.kind === 'exit') break;
    }
    const ring1 = sim.foreignRing()!.filter((b) => b !== 0).length;
    ctx.expect('the other agent\'s trace went on: its ring kept filling while the workload ran', ring1 > ring0, `${ring0} → ${ring1} non-zero bytes in its ring`);
    ctx.expectEqual('and it still traces with its own configuration (TraceEn=1, its table)', sim.foreignTracing(), [0]);
  },
};
