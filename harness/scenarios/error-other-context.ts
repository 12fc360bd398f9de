// error-other-context: an operational error of a context whose ToPA PMI is
// handled on its saved image (docs/sdm/output.md §4.7, §6, §7.3). Two contexts
// share one CPU; A runs with interrupts off (from its entry on: the bytes of a
// restore can fill a region too), so the PMI of its INT region (the second of
// a grow batch) waits until A has left the CPU. Before A gets
// there, its third entry is replaced by an END entry with INT set (§4.7 rule
// 4a): once the INT region is full, the CPU meets the bad entry, sets
// STATUS.Error (TriggerEn=0, nothing more is traced) and leaves the pointer on
// it. The PMI is then A's, taken while B runs: the handler must account for
// A's bytes on the saved image, refill nothing (a refill cannot repair the
// error) and keep Error set, so A stays silent when restored and its final
// stop records one "error" loss where its trace ends. B traces on, lossless.
import { imbalance } from '../../driver/collect/ledger.js';
import { IA32_RTIT_OUTPUT_BASE } from '../../driver/hw/msrs.js';
import { topaEntry } from '../../driver/hw/topa.js';
import { growPair, secondWorkload, switchingOf } from './kit/contexts-kit.js';
import { everyPmiHandled, timingVolume } from './kit/helpers.js';
import { interruptsOffWhile } from './kit/interrupts-off.js';
import type { Scenario } from './kit/scenario.js';
import { filterEvents } from './kit/target-wrap.js';
import { needsMultiEntryTopa } from './topa-grow.js';
import { ownedBranches, ownerOf } from './kit/truth-owner.js';

const REGION = 4096;

/** The `error-other-context` scenario (see the file comment). */
export const errorOtherContext: Scenario = {
  name: 'error-other-context',
  checks: 'two contexts; A meets a bad ToPA entry (Error) while its PMI waits until A left the CPU: the PMI is handled on A\'s saved image with no refill, Error stays, one "error" loss at 2 regions; B lossless',
  appliesTo: 'CPUs with multi-entry ToPA (the model: real targets run one workload per CPU)',
  targets: ['sim'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-operational-error',
  async run(ctx) {
    const sim = ctx.sim!;
    // Far more output than the 2 regions before the error, so A meets it long before its last slice.
    const { workload: a, extra: timing } = ctx.busy(16 * REGION);
    const b = secondWorkload(ctx, 12_000);
    const extra = { switching: switchingOf(ctx), ...timingVolume(ctx.env.caps), ...timing };
    let badAt: bigint | undefined;
    // At A's first preemption point (still in its first region), its third entry goes bad. A CPU that
    // cached the table at the enable sees it from A's next restore on (§4.8), before A gets there.
    const target = filterEvents(interruptsOffWhile(ctx.target, sim, a, { holdAtEntry: true }), async function* (events, workload, cpu) {
      for await (const ev of events) {
        if (workload === a && ev.kind === 'slice' && badAt === undefined) {
          const table = sim.unit(cpu).peek(IA32_RTIT_OUTPUT_BASE.address);
          badAt = table + 16n;
          const entry = new Uint8Array(8);
          new DataView(entry.buffer).setBigUint64(0, topaEntry({ base: table, end: true, int: true }), true);
          await ctx.target.phys.write(badAt, entry);
        }
        yield ev;
      }
    });
    const results = await growPair(ctx, target, a, b, extra, 100);
    const [ra, rb] = results;
    const saved = ra.pmis.filter((p) => p.action === 'handled-saved');
    ctx.expectEqual('A\'s PMI was handled on its saved image, found Error, and refilled nothing',
      saved.map((p) => [p.error, p.stopped, p.branch ?? 'no refill']), [[true, false, 'no refill']]);
    ctx.expect('A: every ToPA PMI was handled', everyPmiHandled(ra.pmis.filter((p) => p.action !== 'not-topa')), ra.pmis.map((p) => p.action).join(','));
    ctx.expectEqual('A: Error=1 at the end (the handler left it set), one "error" loss where its trace ends, after 2 regions',
      [ra.final.error, ra.ledger.lost.map((l) => [l.reason, l.at, l.bytes]), ra.stream.length], [true, [['error', 2 * REGION, null]], 2 * REGION]);
    ctx.expect('B: every ToPA PMI was handled, lossless', everyPmiHandled(rb.pmis.filter((p) => p.action !== 'not-topa')) && rb.ledger.lost.length === 0,
      `${rb.pmis.map((p) => p.action).join(',')}; lost ${JSON.stringify(rb.ledger.lost)}`);
    for (const r of results) ctx.expectEqual(`context ${r.name}: the ledger balances`, imbalance(r.ledger), 0);
    ctx.expectEqual('every branch of B was traced', ownedBranches(sim, b), b.model.branchCount);
    ctx.truthFilter = { owner: ownerOf(a) };
    ctx.expectFlowEqualsTruth('ptlab flow of A\'s trace up to the error is a prefix of A\'s part of truth.jsonl', 'prefix');
  },
};
