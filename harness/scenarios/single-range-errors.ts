// single-range-errors: what the driver refuses and what the CPU flags for
// single-range output (docs/sdm/output.md §3.2; docs/sdm/msrs.md §6): a size that is
// not a power of two is refused before any WRMSR; a base not aligned to the
// range size is operational error 2 (STATUS.Error at enable).
import { alloc, manualRun } from './kit/manual.js';
import { needs, type Scenario } from './kit/scenario.js';

/** The `single-range-errors` scenario (see the file comment). */
export const singleRangeErrors: Scenario = {
  name: 'single-range-errors',
  checks: 'single range: a non-power-of-two size is refused before any WRMSR; a base not aligned to the size sets STATUS.Error',
  appliesTo: 'CPUs with single-range output (CPUID.(14H,0):ECX[2]; not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needs(env.caps.singleRangeOutput, 'single-range output (CPUID.(14H,0):ECX[2])'),
  negative: 'no-operational-error',
  async run(ctx) {
    await ctx.expectRefused('a 12 KiB single range is refused (bad_config) before any WRMSR', 'bad_config',
      () => ctx.trace({ output: { scheme: 'single-range', size: 12 * 1024 } }));
    const region = await alloc(ctx, 16384);
    // An 8 KiB range (mask 0x1fff) whose base has bit 12 set: OutputBase & OutputMask ≠ 0 (§3.2 error 2).
    const end = await manualRun(ctx, { toPA: false, outputBase: region.base + 0x1000n, maskPtrs: 0x1fffn });
    ctx.expectEqual('STATUS.Error=1 (base and mask overlap)', end.status.Error, true);
    const data = await ctx.target.phys.read(region.base, 16384);
    ctx.expect('nothing was written', data.every((b) => b === 0), 'region is all zeros');
  },
};
