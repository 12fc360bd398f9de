// context-switch-manual: saving and restoring trace state with RDMSR/WRMSR
// (docs/sdm/xsave.md §5): CTL (TraceEn=0) first on save, CTL last on restore, and
// the live MSRs (OUTPUT_BASE, OUTPUT_MASK_PTRS, STATUS) read back exactly.
import { anyOutput } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';

const CTL = '0x570';

/** The `context-switch-manual` scenario (see the file comment). */
export const contextSwitchManual: Scenario = {
  name: 'context-switch-manual',
  checks: 'manual (RDMSR/WRMSR) context switches every 2000 branches: CTL written first and last; lossless; flow = truth',
  appliesTo: 'every CPU with ToPA output',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => (env.caps.topaOutput ? undefined : 'the CPU does not enumerate ToPA output (CPUID.(14H,0):ECX[0])'),
  negative: 'stale-pointers',
  catches: ['manual-restore-ctl-first', 'manual-save-before-stop'],
  async run(ctx) {
    const w = ctx.workload({ minBranches: 20_000 });
    const r = await ctx.trace(anyOutput(ctx.env.caps.topaMultipleEntries, { switching: 'manual' }, w), { workload: w, sliceBranches: 2000 });
    ctx.expect('the context was switched several times', r.switches >= 5, `${r.switches} switches`);
    // Each switch: the first write after the slice event is CTL with TraceEn=0; the last write before the next event is CTL with TraceEn=1.
    const lines = ctx.target.lines;
    let ordered = 0;
    lines.forEach((l, i) => {
      if (l.op !== 'slice') return;
      const next = lines.slice(i + 1).findIndex((x) => x.op === 'pmi' || x.op === 'slice' || x.op === 'exit');
      const seg = lines.slice(i + 1, next < 0 ? undefined : i + 1 + next).filter((x) => x.op === 'wrmsr');
      const first = seg[0], last = seg[seg.length - 1];
      if (first?.msr === CTL && (BigInt(first.value!) & 1n) === 0n && last?.msr === CTL && (BigInt(last.value!) & 1n) === 1n) ordered++;
    });
    ctx.expectEqual('every switch wrote CTL(TraceEn=0) first and CTL(TraceEn=1) last', ordered, r.switches);
    ctx.expectLossless(r);
  },
};
