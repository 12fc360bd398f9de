// trace-confined: on a lab machine the traced CPU runs other code too — the helper that started the
// workload, sshd, another process, the kernel — between the workload's slices, before its first
// instruction and after its exit (the model's `--realism lab`: harness/sim/exec/other-code.ts).
// With User=1 and no filter that code is traced and the trace is not the workload's. The driver
// confines every trace to its workload (driver/confine.ts): an IP filter on the image where the CPU
// has address ranges, a CR3 filter on its address space where it has not. Every traced branch is
// then the workload's, and ptlab flow reproduces the model's truth.
import { anyOutput } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';

/** The `trace-confined` scenario (see the file comment). */
export const traceConfined: Scenario = {
  name: 'trace-confined',
  checks: 'other code runs on the traced CPU around the workload (--realism lab): the trace is confined to the workload (IP filter, or CR3 filter), every traced branch is its own; lossless',
  appliesTo: 'every CPU with ToPA output, where the model is the PT unit (it provides the other code)',
  targets: ['sim'],
  skip: (env) => (env.caps.topaOutput ? undefined : 'the CPU does not enumerate ToPA output (CPUID.(14H,0):ECX[0])'),
  sim: { realism: 'lab' },
  // Its first profile is Broadwell, confined by CR3 (no address ranges); elsewhere ignore-addr-cfg breaks it the same way.
  // The driver confines by IP filter where the CPU has one and by CR3 otherwise: the model must ignore both.
  negative: 'ignore-filters',
  catches: ['no-confine', 'early-enable'],
  async run(ctx) {
    const w = ctx.workload();
    const r = await ctx.trace(anyOutput(ctx.env.caps.topaMultipleEntries, {}, w), { workload: w, sliceBranches: 1000 });
    const how = ctx.figures.confinement;
    ctx.expect('the driver confined the trace: an IP filter where the CPU has address ranges, else a CR3 filter', how === (ctx.env.caps.ipFiltering ? 'ip-filter' : 'cr3-filter'), `confinement: ${String(how)}`);
    ctx.expectLossless(r);
  },
};
