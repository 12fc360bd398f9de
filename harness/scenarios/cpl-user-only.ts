// cpl-user-only: CTL.User=1, OS=0 (docs/sdm/README.md §2 ContextEn): CPL 0 is not
// traced, so the exit SYSCALL has no destination and interrupts into the
// kernel appear only as disable/enable, never with a kernel address.
import { anyOutput, KERNEL_HALF, records } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';

/** The `cpl-user-only` scenario (see the file comment). */
export const cplUserOnly: Scenario = {
  name: 'cpl-user-only',
  checks: 'User=1, OS=0 with interrupts: no kernel address anywhere in the flow; the exit SYSCALL has no "to"; flow = truth',
  appliesTo: 'every CPU with ToPA output; the sim (interrupts are model-only events)',
  targets: ['sim'],
  skip: (env) => (env.caps.topaOutput ? undefined : 'the CPU does not enumerate ToPA output (CPUID.(14H,0):ECX[0])'),
  negative: 'force-os',
  async run(ctx) {
    const w = ctx.workload({ interrupts: 3 });
    const r = await ctx.trace(anyOutput(ctx.env.caps.topaMultipleEntries, { User: true, OS: false }, w), { workload: w });
    const recs = records(ctx.sim?.truth(0) ?? []);
    const kernel = recs.filter((x) => [x.ip, x.to, x.from].some((v) => v !== undefined && BigInt(v) >= KERNEL_HALF));
    ctx.expectEqual('no kernel address in the flow', kernel.length, 0);
    const exit = recs.filter((x) => x.kind === 'far.call');
    ctx.expect('the exit SYSCALL is a far.call without "to"', exit.length === 1 && exit[0]!.to === undefined, JSON.stringify(exit));
    // Tracing resumes (TIP.PGE) after each interrupt and after each PMI handler, both untraced CPL 0 code
    // (docs/design.md "How the model runs"), and once at the start. A PMI delivered while the CPU is in an
    // interrupt's kernel code shares its untraced stretch: one resume for both.
    const interrupts = w.model.annotations.filter((a) => a.kind === 'interrupt').length;
    const resumes = recs.filter((x) => x.kind === 'enable').length - 1;
    const unresumed = recs.filter((x, i) => x.kind === 'disable' && i < recs.length - 1 && recs[i + 1]!.kind !== 'enable').length;
    ctx.expect('tracing resumes once at the start and after every untraced stretch: each interrupt, each PMI not taken inside one',
      resumes >= interrupts && resumes <= interrupts + r.pmis.length && unresumed === 0,
      `${resumes} resumes for ${interrupts} interrupts and ${r.pmis.length} PMIs; ${unresumed} disables not followed by an enable`);
    ctx.expectLossless(r);
  },
};
