// err-topa-misaligned: an output region whose base is not aligned to its size
// is an operational error when the CPU reaches the entry (docs/sdm/output.md §4.7
// rule 2b): STATUS.Error := 1, TriggerEn := 0, nothing is written.
import { alloc, manualRun, rawEntry, writeU64 } from './kit/manual.js';
import { needs, type Scenario } from './kit/scenario.js';

/** The `err-topa-misaligned` scenario (see the file comment). */
export const errTopaMisaligned: Scenario = {
  name: 'err-topa-misaligned',
  checks: 'a ToPA region base not aligned to its size (8 KiB region at a 4 KiB boundary) sets STATUS.Error; nothing is written',
  appliesTo: 'every CPU with ToPA output',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needs(env.caps.topaOutput, 'ToPA output (CPUID.(14H,0):ECX[0])'),
  negative: 'no-operational-error',
  async run(ctx) {
    const table = await alloc(ctx, 4096);
    const region = await alloc(ctx, 16384);
    const bad = region.base + 0x1000n; // 4 KiB aligned, not 8 KiB aligned
    // Entry 0: 8 KiB region (Size=1) at `bad`; entry 1: END back to the table (legal on MENTRY=0 CPUs too: §4.6).
    await writeU64(ctx, table.base, [rawEntry(bad, { size: 1 }), rawEntry(table.base, { end: true })]);
    const end = await manualRun(ctx, { toPA: true, outputBase: table.base, maskPtrs: 0x7fn });
    ctx.expectEqual('STATUS.Error=1 (rule 2b)', end.status.Error, true);
    ctx.expectEqual('STATUS.Stopped=0', end.status.Stopped, false);
    ctx.expectEqual('the pointers stay at entry 0, offset 0 (OUTPUT_MASK_PTRS = 0x7f)', end.maskPtrs, 0x7fn);
    const data = await ctx.target.phys.read(bad, 64);
    ctx.expect('nothing was written to the region', data.every((b) => b === 0), `first bytes ${Buffer.from(data.subarray(0, 8)).toString('hex')}`);
  },
};
