// err-topa-midrun: an operational error in the middle of a driver's trace run
// (docs/sdm/output.md §4.7 rule 2b, §6): after the first PMI has grown the table,
// one of the new entries is overwritten (with TraceEn=0) by an 8 KiB region
// at a 4 KiB boundary (in a spare buffer of the run's). When the CPU reaches it, STATUS.Error := 1 and nothing
// more is written. Two runs:
//   1. the STOP guard after the next INT region is the bad entry, so the next
//      ToPA PMI's handler finds Error=1: it records one "error" loss where the
//      trace ends, makes no refill and leaves tracing off;
//   2. the first entry after the old ones is the bad one, so no PMI comes any
//      more and only the final stop finds Error=1 (the run directory is this
//      run's).
// Either way the ledger holds exactly one "error" loss (the final stop must
// not count the handler's error again) and the flow up to it is truth's.
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { topaEntry } from '../../driver/hw/topa.js';
import type { TraceResult } from '../../driver/session.js';
import { TopaManager } from '../../driver/topa/manager.js';
import type { ScenarioContext } from './kit/context.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

const CTL = IA32_RTIT_CTL.address;

/** One trace run whose first PMI is followed by the corruption of table entry `bad`; returns the result and the PMI records' actions. */
async function runWithBadEntry(ctx: ScenarioContext, bad: number): Promise<TraceResult> {
  const { workload, extra } = ctx.busy(32_768);
  // The bad entry's region lies in memory of the run's own (the second and third page of an 8 KiB-aligned
  // 16 KiB buffer), so that a CPU that wrote through it after all would write nothing it does not own.
  // The run's guard frees it at the end, once TraceEn=0 is read back (docs/design.md "The invariant").
  const spare = await ctx.target.phys.alloc(4 * 4096, 8192);
  let corrupted = false;
  return ctx.trace({ output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 }, ...extra }, {
    workload,
    intercept: async (ev, s) => {
      if (ev.kind !== 'pmi' || corrupted) return false;
      corrupted = true;
      await s.onEvent(ev);
      // The table has grown (entries 3–5 after the first 3). With TraceEn=0, entry `bad` becomes an
      // 8 KiB region at a 4 KiB boundary; TraceEn 0→1 makes a CPU that reads ahead read it again.
      const t = (s.plan as TopaManager).tables[0]!;
      const ctl = await ctx.target.rdmsr(0, CTL);
      await ctx.target.wrmsr(0, CTL, ctl & ~1n);
      const misaligned = spare.base + 0x1000n;
      const entry = new Uint8Array(8);
      new DataView(entry.buffer).setBigUint64(0, topaEntry({ base: misaligned, size: 8192 }), true);
      await ctx.target.phys.write(t.base + BigInt(8 * bad), entry);
      await ctx.target.wrmsr(0, CTL, ctl);
      return true;
    },
  });
}

/** The expectations of one run; `handlerSees`: the error is found by a PMI handler (else by the final stop). */
function expectOneError(ctx: ScenarioContext, r: TraceResult, run: string, handlerSees: boolean): void {
  ctx.expectEqual(`${run}: STATUS.Error=1 at the end`, r.final.error, true);
  const errors = r.ledger.lost.filter((l) => l.reason === 'error');
  ctx.expectEqual(`${run}: one "error" loss, where the trace ends`, errors.map((l) => [l.at, l.bytes]), [[r.stream.length, null]]);
  const seen = r.pmis.filter((p) => p.action === 'handled' && p.error);
  ctx.expect(`${run}: ${handlerSees ? 'a PMI handler found the error, made no refill and left tracing off' : 'no PMI handler saw the error'}`,
    handlerSees ? seen.length === 1 && seen[0]!.branch === undefined && r.pmis.at(-1) === seen[0] : seen.length === 0,
    r.pmis.map((p) => `${p.action}${p.error ? '(error)' : ''}${p.branch ? `:${p.branch}` : ''}`).join(','));
  ctx.expect(`${run}: the CPU wrote a trace before the error`, r.stream.length >= 3 * 4096, `${r.stream.length} bytes`);
}

/** The `err-topa-midrun` scenario (see the file comment). */
export const errTopaMidrun: Scenario = {
  name: 'err-topa-midrun',
  checks: 'an operational error mid-run (a bad ToPA entry after the first grow): found by the next PMI handler (no refill, tracing stays off) or by the final stop; one "error" loss; flow = truth up to it',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim', 'qemu', 'ssh'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-operational-error',
  async run(ctx) {
    expectOneError(ctx, await runWithBadEntry(ctx, 5), 'run 1 (the STOP guard after the next INT region)', true);
    // truth.jsonl: run 2's records only (the model's truth holds both runs).
    const before = ctx.sim?.truthLog(0)?.length ?? 0;
    ctx.truthFilter = { from: before };
    const r = await runWithBadEntry(ctx, 3);
    expectOneError(ctx, r, 'run 2 (the first new entry)', false);
    ctx.expectFlowEqualsTruth('ptlab flow of run 2 up to the error gap is a prefix of truth.jsonl', 'prefix');
  },
};
