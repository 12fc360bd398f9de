// single-entry-topa: the only ToPA layout MENTRY=0 CPUs accept (spec/output.md
// §4.6): one output entry, then END back to the table; the handler copies the
// region out at each PMI. On MENTRY=0 CPUs the PMI comes early (before full).
import { everyPmiHandled } from './helpers.js';
import { needs, type Scenario } from './scenario.js';

/** The `single-entry-topa` scenario (see the file comment). */
export const singleEntryTopa: Scenario = {
  name: 'single-entry-topa',
  checks: 'single-entry ToPA (one region + END to itself): PMIs drain the region in time; lossless; flow = truth',
  appliesTo: 'MENTRY=0 CPUs (Broadwell), where it is the only layout and the PMI comes before the region is full',
  targets: ['sim', 'ssh'],
  skip: (env) => needs(env.caps.topaOutput, 'ToPA output (CPUID.(14H,0):ECX[0])') ?? (env.caps.topaMultipleEntries
    ? 'a multi-entry ToPA CPU raises the PMI only once the single region is full, so the layout loses the skid by design (spec/output.md §4.5–§4.6): use grow, chain or circular-fresh there'
    : undefined),
  // The early PMI comes 512 bytes before full (spec/output.md §4.6, Open Question 23); the skid plus the flush grain must fit.
  sim: { pmiSkid: 64 },
  negative: 'no-topa-pmi',
  async run(ctx) {
    const { workload, extra } = ctx.busy(16_384);
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'single-entry', regionSize: 4096, regions: 1 }, ...extra }, { workload });
    // More bytes than the region holds can only have come through it by being drained and reused.
    ctx.expect('the region was reused: more bytes than it holds went through it', r.stream.length > 4096, `${r.stream.length} bytes through one 4 KiB region`);
    ctx.expect('every PMI was handled', r.pmis.length >= 2 && everyPmiHandled(r.pmis), `${r.pmis.length} PMIs`);
    ctx.expectLossless(r);
  },
};
