// single-entry-topa: the only ToPA layout MENTRY=0 CPUs accept (docs/sdm/output.md
// §4.6): one output entry, then END back to the table; the handler copies the
// region out at each PMI. On MENTRY=0 CPUs the PMI comes early (before full).
// A second run never handles the PMI before the workload ends: the entry's
// STOP must stop the CPU at the full region (one "stop" loss, found at the
// final stop), not let it wrap through the END and overwrite the trace.
import { imbalance } from '../../driver/collect/ledger.js';
import { everyPmiHandled } from './kit/helpers.js';
import { needs, type Scenario } from './kit/scenario.js';

/**
 * Why a scenario of the single-output-region layout skips on a CPU: no ToPA output, or multi-entry
 * ToPA (`onMultiEntry` says what covers the case there); undefined on a MENTRY=0 CPU (§4.6).
 */
export function needsSingleEntryTopa(caps: { topaOutput: boolean; topaMultipleEntries: boolean }, onMultiEntry: string): string | undefined {
  return needs(caps.topaOutput, 'ToPA output (CPUID.(14H,0):ECX[0])') ?? (caps.topaMultipleEntries ? onMultiEntry : undefined);
}

/** The `single-entry-topa` scenario (see the file comment). */
export const singleEntryTopa: Scenario = {
  name: 'single-entry-topa',
  checks: 'single-entry ToPA (one region + END to itself): PMIs drain the region in time; lossless; flow = truth',
  appliesTo: 'MENTRY=0 CPUs (Broadwell), where it is the only layout and the PMI comes before the region is full',
  targets: ['sim', 'ssh'],
  skip: (env) => needsSingleEntryTopa(env.caps,
    'a multi-entry ToPA CPU raises the PMI only once the single region is full, so the layout loses the skid by design (docs/sdm/output.md §4.5–§4.6): use grow, chain or circular-fresh there'),
  // The early PMI comes 512 bytes before full (docs/sdm/output.md §4.6, Open Question 23); the skid plus the flush grain must fit.
  sim: { pmiSkid: 64 },
  negative: 'no-topa-pmi',
  async run(ctx) {
    const { workload, extra } = ctx.busy(16_384);
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'single-entry', regionSize: 4096, regions: 1 }, ...extra }, { workload });
    // More bytes than the region holds can only have come through it by being drained and reused.
    ctx.expect('the region was reused: more bytes than it holds went through it', r.stream.length > 4096, `${r.stream.length} bytes through one 4 KiB region`);
    ctx.expect('every PMI was handled', r.pmis.length >= 2 && everyPmiHandled(r.pmis), `${r.pmis.length} PMIs`);
    ctx.expectLossless(r);
    const before = ctx.sim?.truthLog(0)?.length ?? 0;
    ctx.truthFilter = { from: before };
    const r2 = await ctx.trace({ output: { scheme: 'topa', policy: 'single-entry', regionSize: 4096, regions: 1 }, ...extra }, {
      workload, intercept: async (ev) => ev.kind === 'pmi',
    });
    ctx.expectEqual('run 2 (no handler): STOP stopped the CPU at the full region; one "stop" loss at 4 KiB',
      [r2.final.stopped, r2.ledger.lost.map((l) => [l.at, l.bytes, l.reason])], [true, [[4096, null, 'stop']]]);
    ctx.expectEqual('run 2: the ledger balances', imbalance(r2.ledger), 0);
    ctx.expectFlowEqualsTruth('ptlab flow of run 2 up to the stop gap is a prefix of truth.jsonl', 'prefix');
  },
};
