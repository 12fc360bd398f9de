// topa-chain-stop-end: two ToPA situations on a chain of tables that the
// other chain scenarios never reach (docs/sdm/output.md §4.3, §4.4, §4.7, §8).
// Each table of the chain policy holds 3 regions (INT on the second, STOP on
// the third) and an END entry.
//   1. A late reader in a chained table: the second PMI (table 2's INT region)
//      is held back until the CPU has stopped at table 2's full STOP entry. The
//      handler must find that ToPA STOP in the table OUTPUT_BASE names (not in
//      the first table, whose same slot lost its STOP when it was chained),
//      record one "stop" loss, chain a new table and resume tracing.
//   2. A pointer resting on an END entry: after the third PMI has chained
//      table 4, the END entry of table 3 (the CPU's current table) is made bad
//      (END with INT=1, rule 4a) while tracing is off. An error is raised when
//      the CPU arrives at the faulty entry, i.e. once table 3's last region is
//      full and the next byte needs a place (§4.7), so Error=1 with the pointer
//      left on the END entry, offset 0. The final stop must read that pointer
//      as the start of the table the END links to (§8), and record one "error"
//      loss where the trace ends.
import { imbalance } from '../../driver/collect/ledger.js';
import { IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS, IA32_RTIT_STATUS } from '../../driver/hw/msrs.js';
import { decodeTopaPointers } from '../../driver/hw/output-pointers.js';
import { topaEntry } from '../../driver/hw/topa.js';
import type { TargetEvent } from '../../driver/target.js';
import type { TopaManager } from '../../driver/topa/manager.js';
import { everyPmiHandled, linesOf } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

const REGION = 4096;
const CTL = IA32_RTIT_CTL.address;

/** The `topa-chain-stop-end` scenario (see the file comment). */
export const topaChainStopEnd: Scenario = {
  name: 'topa-chain-stop-end',
  checks: 'ToPA chain: a late handler finds a ToPA STOP in the second table (one "stop" loss, tracing resumes); then a bad END entry stops the CPU with the pointer on it, which the final stop reads as the linked table (one "error" loss)',
  appliesTo: 'CPUs with multi-entry ToPA (not Broadwell)',
  targets: ['sim'],
  skip: (env) => needsMultiEntryTopa(env.caps),
  negative: 'no-operational-error',
  async run(ctx) {
    const { workload, extra } = ctx.busy(16 * REGION);
    const from = ctx.target.lines.length;
    let seen = 0, held: TargetEvent | undefined, late = false, badEnd: bigint | undefined;
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'chain', regionSize: REGION, regions: 3 }, ...extra }, {
      workload,
      sliceBranches: 500,
      intercept: async (ev, s) => {
        if (ev.kind === 'pmi' && ++seen === 2) { held = ev; return true; }
        if (held) {
          // PMI 2 waits until a preemption point finds the CPU stopped (or the workload exits).
          if (ev.kind !== 'slice' && ev.kind !== 'exit') return false;
          if (ev.kind === 'slice' && !IA32_RTIT_STATUS.decode(await ctx.target.rdmsr(0, IA32_RTIT_STATUS.address)).Stopped) return true;
          late = ev.kind === 'slice';
          const pmi = held;
          held = undefined;
          await s.onEvent(pmi);
          return ev.kind === 'slice';
        }
        if (ev.kind !== 'pmi' || seen !== 3) return false;
        await s.onEvent(ev);
        // Table 4 is chained: with TraceEn=0, table 3's END (→ table 4) becomes END with INT=1 (§4.7 rule 4a).
        const tables = (s.plan as TopaManager).tables;
        const t = tables[2], next = tables[3];
        if (!t || !next) return true;
        const ctl = await ctx.target.rdmsr(0, CTL);
        await ctx.target.wrmsr(0, CTL, ctl & ~1n);
        const entry = new Uint8Array(8);
        new DataView(entry.buffer).setBigUint64(0, topaEntry({ base: next.base, end: true, int: true }), true);
        badEnd = t.base;
        await ctx.target.phys.write(t.base + BigInt(8 * t.endIndex), entry);
        await ctx.target.wrmsr(0, CTL, ctl);
        return true;
      },
    });
    const handled = r.pmis.filter((p) => p.action === 'handled');
    ctx.expect('three PMIs handled, the second late (at a preemption point) and at a ToPA STOP',
      late && handled.length === 3 && handled.map((p) => p.stopped).join() === 'false,true,false' && everyPmiHandled(r.pmis),
      `late=${late}; ${r.pmis.map((p) => `${p.action}${p.stopped ? '(stop)' : ''}${p.error ? '(error)' : ''}`).join(',')}`);
    ctx.expectEqual('one "stop" loss at the end of the second table (6 regions), one "error" loss where the trace ends (9 regions)',
      r.ledger.lost.map((l) => [l.reason, l.at, l.bytes]), [['stop', 6 * REGION, null], ['error', 9 * REGION, null]]);
    ctx.expectEqual('the ledger balances', imbalance(r.ledger), 0);
    ctx.expectEqual('STATUS.Error=1 at the end, and the trace ends after 9 regions', [r.final.error, r.stream.length], [true, 9 * REGION]);
    // The final stop's reads: OUTPUT_BASE = table 3, MASK_PTRS = its END entry (index 3), offset 0.
    const lines = ctx.target.lines.slice(from);
    const base = linesOf(lines, 'rdmsr', IA32_RTIT_OUTPUT_BASE.address).at(-1)?.result;
    const mask = linesOf(lines, 'rdmsr', IA32_RTIT_OUTPUT_MASK_PTRS.address).at(-1)?.result;
    const ptr = mask === undefined ? undefined : decodeTopaPointers(BigInt(mask));
    ctx.expect('the final stop read a pointer resting on the bad END entry (table 3, entry 3, offset 0)',
      badEnd !== undefined && base !== undefined && BigInt(base) === badEnd && ptr?.entryIndex === 3 && ptr.outputOffset === 0,
      `OUTPUT_BASE ${base ?? '?'} (table 3 at 0x${(badEnd ?? 0n).toString(16)}), pointer ${ptr ? `entry ${ptr.entryIndex} offset ${ptr.outputOffset}` : '?'}`);
    ctx.expectFlowEqualsTruth('ptlab flow up to the stop gap is a prefix of truth.jsonl', 'prefix');
  },
};
