// ovf-drain: an internal buffer that cannot drain (docs/sdm/packets.md §12;
// docs/design.md losses.json): packets are dropped inside the CPU, each overflow
// shows as an OVF in the stream and an "ovf" loss with bytes null, the model
// reports its own `dropped`, and the ledger still balances.
import { imbalance } from '../../driver/collect/ledger.js';
import { anyOutput, packetStats, records } from './helpers.js';
import type { Scenario } from './scenario.js';

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
    // A path long enough that the slow drain overflows on every seed.
    const w = ctx.workload({ minBranches: 5000 });
    const r = await ctx.trace(anyOutput(ctx.env.caps.topaMultipleEntries, {}, w), { workload: w });
    const ovfs = packetStats(r.stream).count.ovf ?? 0;
    const lost = r.ledger.lost.filter((l) => l.reason === 'ovf');
    ctx.expect('the stream has OVF packets', ovfs > 0, `${ovfs} OVF`);
    ctx.expectEqual('one "ovf" loss with bytes null per OVF packet', [lost.length, lost.every((l) => l.bytes === null)], [ovfs, true]);
    ctx.expect('the model reports dropped bytes', (r.ledger.dropped ?? 0) > 0, `dropped ${r.ledger.dropped ?? '?'}`);
    ctx.expectEqual('the ledger balances (OVF bytes are not counted)', imbalance(r.ledger), 0);
    const over = records(ctx.sim?.truth(0) ?? []).filter((x) => x.kind === 'overflow').length;
    ctx.expectEqual('truth.jsonl has one overflow record per OVF', over, ovfs);
    // What ran while packets were dropped is not in the trace: flow and truth agree up to the first OVF gap.
    ctx.expectFlowEqualsTruth('ptlab flow up to the first OVF gap is a prefix of truth.jsonl', 'prefix');
  },
};
