// topa-grow: the SDM PMI algorithm's "add entries after the last one" branch
// (docs/sdm/output.md §7.1): INT on a region before the last, a STOP guard, and
// each PMI appends regions, so nothing is ever overwritten. The tables hold 8
// entries (END included), so the handler grows the first table while a batch
// fits and then chains to a new one (the algorithm's other branch), and no
// entry is ever written past a table's capacity.
import { everyPmiHandled, linesOf } from './kit/helpers.js';

/** Entries per table, the END included. */
const TABLE_ENTRIES = 8;
import { firstSkip, needs, type Scenario } from './kit/scenario.js';

/** Skip rule of every multi-entry ToPA scenario. */
export function needsMultiEntryTopa(caps: { topaOutput: boolean; topaMultipleEntries: boolean }): string | undefined {
  return firstSkip(needs(caps.topaOutput, 'ToPA output (CPUID.(14H,0):ECX[0])'),
    needs(caps.topaMultipleEntries, 'multi-entry ToPA tables (CPUID.(14H,0):ECX[1] MENTRY)'));
}

/** The `topa-grow` scenario (see the file comment). */
export const topaGrow: Scenario = {
  name: 'topa-grow',
  checks: 'ToPA grow policy in 8-entry tables: PMIs append regions while a batch fits, then chain; no entry past the capacity; lossless; flow = truth',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-topa-pmi',
  catches: ['restore-ctl-before-refill', 'skip-global-ack', 'unmask-before-clear', 'invert-not-topa'],
  async run(ctx) {
    const { workload, extra } = ctx.busy(24_576);
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 2, tableEntries: TABLE_ENTRIES }, ...extra }, { workload });
    ctx.expect('the CPU raised ToPA PMIs', r.pmis.length >= 4, `${r.pmis.length} PMIs`);
    ctx.expect('every PMI was handled with tracing on', everyPmiHandled(r.pmis), r.pmis.map((p) => p.action).join(','));
    // 2 + 2 + 2 regions and the END fill 7 of the 8 entries; the next batch does not fit: chain.
    const branches = r.pmis.flatMap((p) => (p.branch ? [p.branch] : []));
    ctx.expectEqual('the first table grew twice, then the handler chained to a new table', branches.slice(0, 3), ['grow', 'grow', 'chain']);
    const past = linesOf(ctx.target.lines, 'topa').filter((l) => (l.index ?? 0) >= TABLE_ENTRIES);
    ctx.expectEqual(`no ToPA entry was written past a table's ${TABLE_ENTRIES} entries`, past.map((l) => `${l.addr}[${l.index}]`), []);
    const bases = new Set(linesOf(ctx.target.lines, 'rdmsr', 0x560).map((l) => l.result));
    ctx.expect('the CPU followed the END into the chained table', bases.size >= 2, `OUTPUT_BASE seen: ${[...bases].join(', ')}`);
    ctx.expectLossless(r);
  },
};
