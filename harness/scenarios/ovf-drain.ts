// ovf-drain: an internal buffer that cannot drain (docs/sdm/packets.md §12;
// docs/design.md losses.json): packets are dropped inside the CPU, each overflow
// shows as an OVF in the stream and an "ovf" loss with bytes null, the model
// reports its own `dropped`, and the ledger still balances. A second run, on CPUs
// with multi-entry ToPA, also ends at a full STOP region (no handler before the
// end: docs/sdm/output.md §4.4): the ledger then holds losses from two sources,
// OVFs found in the stream and the stop found at the final disable, and must
// list them in stream order, the OVFs before the stop.
import { imbalance } from '../../driver/collect/ledger.js';
import { findOvfs } from '../../driver/collect/ovf.js';
import { anyOutput, packetStats, records } from './kit/helpers.js';
import type { TraceOptions } from '../../driver/request.js';
import type { GeneratedWorkload } from '../sim/workload/index.js';
import type { ScenarioContext } from './kit/context.js';
import type { Scenario } from './kit/scenario.js';

/** The `ovf-drain` scenario (see the file comment). */
export const ovfDrain: Scenario = {
  name: 'ovf-drain',
  checks: 'a slow internal-buffer drain: OVF packets = "ovf" losses (bytes null); dropped > 0; the ledger balances; the flow resumes after each OVF',
  appliesTo: 'the sim (the drain rate is a model setting)',
  targets: ['sim'],
  skip: (env) => (env.caps.topaOutput ? undefined : 'the CPU does not enumerate ToPA output (CPUID.(14H,0):ECX[0])'),
  sim: { buffer: { capacity: 256, drainBytesPerCycle: 0.05 } },
  negative: 'no-overflow',
  async run(ctx) {
    // A path long enough that the slow drain overflows on every seed; where run 2 follows, long enough
    // (dense timing packets where enumerated) to fill its 12 KiB: the drain lets about 3 % through.
    const mentry = ctx.env.caps.topaMultipleEntries;
    const { workload: w, extra } = mentry ? ctx.busy(512 << 10) : { workload: ctx.workload({ minBranches: 5000 }), extra: {} };
    const r = await ctx.trace(anyOutput(mentry, {}, w), { workload: w });
    const ovfs = packetStats(r.stream).count.ovf ?? 0;
    const lost = r.ledger.lost.filter((l) => l.reason === 'ovf');
    ctx.expect('the stream has OVF packets', ovfs > 0, `${ovfs} OVF`);
    ctx.expectEqual('one "ovf" loss with bytes null per OVF packet', [lost.length, lost.every((l) => l.bytes === null)], [ovfs, true]);
    ctx.expect('the model reports dropped bytes', (r.ledger.dropped ?? 0) > 0, `dropped ${r.ledger.dropped ?? '?'}`);
    ctx.expectEqual('the ledger balances (OVF bytes are not counted)', imbalance(r.ledger), 0);
    const over = records(ctx.sim?.truth(0) ?? []).filter((x) => x.kind === 'overflow').length;
    ctx.expectEqual('truth.jsonl has one overflow record per OVF', over, ovfs);
    if (mentry) await ovfThenStop(ctx, w, extra);
    // Of the last run (run 2 where there is one): what ran while packets were dropped is not in the trace.
    ctx.expectFlowEqualsTruth('ptlab flow up to the first OVF gap is a prefix of truth.jsonl', 'prefix');
  },
};

/** Run 2: grow with 3 regions of 4 KiB (STOP on the last) and no handler before the end. */
async function ovfThenStop(ctx: ScenarioContext, workload: GeneratedWorkload, extra: TraceOptions): Promise<void> {
  const before = ctx.sim?.truthLog(0)?.length ?? 0;
  ctx.truthFilter = { from: before };
  const r = await ctx.trace({ output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 }, ...extra }, {
    workload,
    intercept: async (ev) => ev.kind === 'pmi',
  });
  const ovfs = findOvfs(r.stream);
  ctx.expectEqual('run 2: STATUS.Stopped=1 at the final stop (the STOP region filled)', r.final.stopped, true);
  ctx.expectEqual('run 2: the ledger lists every OVF, then the stop at 3 × 4 KiB, in stream order',
    r.ledger.lost.map((l) => `${l.reason}@${l.at}`), [...ovfs.map((at) => `ovf@${at}`), `stop@${3 * 4096}`]);
  ctx.expect('run 2: the stream has an OVF before the stop', ovfs.length > 0, `${ovfs.length} OVF`);
  ctx.expectEqual('run 2: the ledger balances', imbalance(r.ledger), 0);
}
