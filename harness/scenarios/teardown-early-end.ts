// teardown-early-end: a trace run that ends early — something fails between the enable and the
// stop (a workload fault, a helper timeout, a user's abort) — still gives its memory back safely
// (docs/design.md "The invariant", docs/sdm/output.md §9): TraceEn=0 is written and read back
// before the first buffer is freed, every buffer the run allocated is freed, and the CPU is left
// with tracing off. The check is read from the transcript, so it means the same on a lab machine
// as on the model, whose memory oracle would also call a free while tracing `corrupt`.
import { hex } from '../../driver/base/hex.js';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { anyOutput, linesOf } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';

const CTL = IA32_RTIT_CTL.address;

/** What ends the run: a failure at its first event, as a helper timeout or a workload fault would. */
class EarlyEnd extends Error {
  override readonly name = 'EarlyEnd';
}

/** The `teardown-early-end` scenario (see the file comment). */
export const teardownEarlyEnd: Scenario = {
  name: 'teardown-early-end',
  checks: 'a run that fails between enable and stop clears TraceEn and reads it back before its first free, frees every buffer, and leaves tracing off',
  appliesTo: 'every CPU with ToPA output',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => (env.caps.topaOutput ? undefined : 'the CPU does not enumerate ToPA output (CPUID.(14H,0):ECX[0])'),
  negative: 'traceen-sticks',
  catches: ['free-before-disable'],
  async run(ctx) {
    const t = ctx.target;
    const from = t.lines.length;
    let ended: unknown;
    try {
      await ctx.trace(anyOutput(ctx.env.caps.topaMultipleEntries), {
        intercept: async () => { throw new EarlyEnd('the run failed at its first event'); },
      });
    } catch (e) {
      ended = e;
    }
    ctx.expect('the run ended early, at its first event, with tracing on', ended instanceof EarlyEnd, ended instanceof Error ? ended.message : 'it ran to its end');
    const lines = t.lines.slice(from);
    const firstFree = lines.findIndex((l) => l.op === 'free');
    const before = firstFree < 0 ? lines : lines.slice(0, firstFree);
    const ctl = hex(CTL);
    // The last write of CTL before the first free clears TraceEn, and a read of CTL after it says 0.
    const lastWrite = before.map((l, i) => ({ l, i })).filter(({ l }) => l.op === 'wrmsr' && l.msr === ctl).pop();
    const readBack = lastWrite && before.slice(lastWrite.i + 1).find((l) => l.op === 'rdmsr' && l.msr === ctl && l.fault === undefined);
    const off = (v: string | undefined): boolean => v !== undefined && (BigInt(v) & 1n) === 0n;
    ctx.expect('before the first free, TraceEn=0 was written and read back (0) on the traced CPU', firstFree >= 0 && off(lastWrite?.l.value) && off(readBack?.result),
      firstFree < 0 ? 'nothing was freed' : `last CTL write before the free ${lastWrite?.l.value ?? 'none'}, read back ${readBack?.result ?? 'never'}`);
    ctx.expectEqual('every buffer the run allocated was freed', linesOf(lines, 'free').length, linesOf(lines, 'alloc').length);
    ctx.expect('the driver reported nothing leaked', ctx.teardowns.every((x) => x.leaked.length === 0), ctx.teardowns.map((x) => x.why ?? `${x.freed} bytes freed`).join('; ') || 'no teardown');
    ctx.expectEqual('tracing is off at the end (IA32_RTIT_CTL.TraceEn)', IA32_RTIT_CTL.decode(await t.rdmsr(0, CTL)).TraceEn, false);
  },
};
