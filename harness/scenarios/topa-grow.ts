// topa-grow: the SDM PMI algorithm's "add entries after the last one" branch
// (spec/output.md §7.1): INT on a region before the last, a STOP guard, and
// each PMI appends regions, so nothing is ever overwritten.
import { everyPmiHandled, linesOf } from './helpers.js';
import { firstSkip, needs, type Scenario } from './scenario.js';

/** Skip rule of every multi-entry ToPA scenario. */
export function needsMultiEntryTopa(caps: { topaOutput: boolean; topaMultipleEntries: boolean }): string | undefined {
  return firstSkip(needs(caps.topaOutput, 'ToPA output (CPUID.(14H,0):ECX[0])'),
    needs(caps.topaMultipleEntries, 'multi-entry ToPA tables (CPUID.(14H,0):ECX[1] MENTRY)'));
}

/** The `topa-grow` scenario (see the file comment). */
export const topaGrow: Scenario = {
  name: 'topa-grow',
  checks: 'ToPA grow policy: every PMI appends regions after the last entry; lossless; flow = truth',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-topa-pmi',
  catches: ['restore-ctl-before-refill', 'skip-global-ack', 'unmask-before-clear', 'invert-not-topa'],
  async run(ctx) {
    const { workload, extra } = ctx.busy(24_576);
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 2 }, ...extra }, { workload });
    ctx.expect('the CPU raised ToPA PMIs', r.pmis.length >= 1, `${r.pmis.length} PMIs`);
    ctx.expect('every PMI was handled with tracing on', everyPmiHandled(r.pmis), r.pmis.map((p) => p.action).join(','));
    // 4 KiB pages: the first is the table, the rest are regions (topa/manager.ts allocates the table first).
    const pages = linesOf(ctx.target.lines, 'alloc').length;
    ctx.expect('the table grew beyond its first 2 regions', pages - 1 > 2, `${pages - 1} regions allocated`);
    const bases = new Set(linesOf(ctx.target.lines, 'rdmsr', 0x560).map((l) => l.result));
    ctx.expectEqual('the CPU stayed in the first table (grow, not chain)', bases.size, 1);
    ctx.expectLossless(r);
  },
};
