// err-topa-end-in-entry0: END=1 in entry 0 of a table is a rule violation
// (docs/sdm/output.md §4.7 rule 4b): an operational error when the CPU reaches it.
import { alloc, manualRun, rawEntry, writeU64 } from './kit/manual.js';
import { needs, type Scenario } from './kit/scenario.js';

/** The `err-topa-end-in-entry0` scenario (see the file comment). */
export const errTopaEndInEntry0: Scenario = {
  name: 'err-topa-end-in-entry0',
  checks: 'a ToPA table whose entry 0 is END sets STATUS.Error when reached; nothing is written',
  appliesTo: 'every CPU with ToPA output',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needs(env.caps.topaOutput, 'ToPA output (CPUID.(14H,0):ECX[0])'),
  negative: 'no-operational-error',
  async run(ctx) {
    const table = await alloc(ctx, 4096);
    const next = await alloc(ctx, 4096);
    const region = await alloc(ctx, 4096);
    // The first table starts with END → `next`; `next` is a valid one-region table.
    await writeU64(ctx, table.base, [rawEntry(next.base, { end: true })]);
    await writeU64(ctx, next.base, [rawEntry(region.base), rawEntry(next.base, { end: true })]);
    const end = await manualRun(ctx, { toPA: true, outputBase: table.base, maskPtrs: 0x7fn });
    ctx.expectEqual('STATUS.Error=1 (rule 4b)', end.status.Error, true);
    ctx.expectEqual('OUTPUT_BASE still names the faulty table', end.outputBase, table.base);
    const data = await ctx.target.phys.read(region.base, 64);
    ctx.expect('nothing was written to the region of the linked table', data.every((b) => b === 0), `first bytes ${Buffer.from(data.subarray(0, 8)).toString('hex')}`);
  },
};
