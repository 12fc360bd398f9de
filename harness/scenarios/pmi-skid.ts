// pmi-skid: the ToPA PMI is imprecise (docs/sdm/output.md §4.5): output goes on
// for a while after the INT region fills. INT sits on a region before the
// last, so the skid lands in the next region and nothing is lost.
import { linesOf, topa } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

const MASK_PTRS = 0x561;

/** The `pmi-skid` scenario (see the file comment). */
export const pmiSkid: Scenario = {
  name: 'pmi-skid',
  checks: 'PMI skid: the handler finds the CPU past the INT region; the skid region absorbs it: 0 bytes lost per PMI',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'huge-pmi-skid',
  async run(ctx) {
    const { workload, extra } = ctx.busy(32_768);
    const r = await ctx.trace(topa('grow', 3, extra), { workload });
    ctx.expect('PMIs were taken', r.pmis.length >= 2, `${r.pmis.length} PMIs`);
    // OUTPUT_MASK_PTRS as read by each handler (the read right after its 'pmi' line): OutputOffset = bits 63:32.
    const lines = ctx.target.lines;
    const offsets = lines.flatMap((l, i) => {
      if (l.op !== 'pmi') return [];
      const rd = linesOf(lines.slice(i), 'rdmsr', MASK_PTRS)[0];
      return rd?.result ? [Number(BigInt(rd.result) >> 32n)] : [];
    });
    ctx.expect('each handler found the CPU already writing past the INT region (skid > 0)', offsets.length === r.pmis.filter((p) => p.action !== 'final-stop').length && offsets.every((o) => o > 0), `OutputOffset at each PMI: ${offsets.join(', ')}`);
    const lost = r.ledger.lost.reduce((a, l) => a + (l.bytes ?? 0), 0);
    ctx.figure('lostBytesPerPmi', r.pmis.length ? lost / r.pmis.length : null);
    ctx.expectLossless(r);
  },
};
