// single-range-wrap: single-range output is circular (docs/sdm/output.md §3.1):
// after the last byte the CPU continues at the base and overwrites old data,
// with no interrupt; the driver must account the overwritten bytes as "wrap".
import { imbalance } from '../../driver/collect/ledger.js';
import { needs, type Scenario } from './kit/scenario.js';

const SIZE = 4096;

/** The `single-range-wrap` scenario (see the file comment). */
export const singleRangeWrap: Scenario = {
  name: 'single-range-wrap',
  checks: 'single-range output wraps at the end of the range; the overwritten bytes are one "wrap" loss; the ledger balances',
  appliesTo: 'CPUs with single-range output (CPUID.(14H,0):ECX[2]; not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needs(env.caps.singleRangeOutput, 'single-range output (CPUID.(14H,0):ECX[2])'),
  negative: 'stale-pointers',
  async run(ctx) {
    const { workload, extra } = ctx.busy(3 * SIZE);
    const r = await ctx.trace({ output: { scheme: 'single-range', size: SIZE }, ...extra }, { workload });
    const written = r.ledger.written ?? 0;
    ctx.expect('the CPU wrote more than the range holds', written > SIZE, `${written} bytes written into ${SIZE}`);
    ctx.expectEqual('the whole range was collected', r.stream.length, SIZE);
    ctx.expectEqual('one "wrap" loss at offset 0 of the overwritten bytes', r.ledger.lost.map((l) => [l.at, l.bytes, l.reason]), [[0, written - SIZE, 'wrap']]);
    ctx.expectEqual('the ledger balances', imbalance(r.ledger), 0);
    ctx.expectFlowEqualsTruth('ptlab flow after the wrap gap is a suffix of truth.jsonl', 'suffix');
  },
};
