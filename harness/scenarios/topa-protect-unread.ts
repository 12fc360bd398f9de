// topa-protect-unread: a reused ring with STOP+INT on the entry before unread
// data (Linux perf `pt_buffer_reset_markers`; spec/output.md §4.4, §7.1):
// with a timely PMI the reader keeps up and nothing is lost.
import { everyPmiHandled, linesOf } from './helpers.js';
import type { Scenario } from './scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

/** The `topa-protect-unread` scenario (see the file comment). */
export const topaProtectUnread: Scenario = {
  name: 'topa-protect-unread',
  checks: 'ToPA protect-unread ring: the same regions are reused, PMIs keep the reader ahead of STOP; lossless',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-topa-pmi',
  async run(ctx) {
    const { workload, extra } = ctx.busy(40_960);
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'protect-unread', regionSize: 4096, regions: 4 }, ...extra }, { workload });
    const allocs = linesOf(ctx.target.lines, 'alloc').length;
    ctx.expectEqual('the ring was reused, never reallocated (1 table + 4 regions)', allocs, 5);
    ctx.expect('the ring went round: more bytes than the ring holds', r.stream.length > 4 * 4096, `${r.stream.length} bytes`);
    ctx.expectEqual('tracing never stopped at a STOP entry', r.final.stopped, false);
    ctx.expect('every PMI was handled', r.pmis.length >= 2 && everyPmiHandled(r.pmis), `${r.pmis.length} PMIs`);
    ctx.expectLossless(r);
  },
};
