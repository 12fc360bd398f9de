// topa-protect-unread: a reused ring with STOP+INT on the entry before unread
// data (Linux perf `pt_buffer_reset_markers`; docs/sdm/output.md §4.4, §7.1):
// with a timely PMI the reader keeps up and nothing is lost. After every
// refill the ring's markers are where the policy promises them, read from the
// transcript's ToPA entry writes: STOP+INT on the entry before the one the CPU
// writes next (the first unread data), and a wake-up INT half a ring ahead
// (never on the STOP entry or just before it: the skid guard).
import { decodeTopaPointers } from '../../driver/hw/output-pointers.js';
import { hex } from '../../driver/base/hex.js';
import type { TranscriptLine } from '../rundir/transcript-line.js';
import { everyPmiHandled, linesOf } from './kit/helpers.js';
import type { Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

/** Regions in the ring, and their size. */
export const K = 4, REGION = 4096;
const OUTPUT_BASE = hex(0x560), MASK_PTRS = hex(0x561);

/** Which ring `misplacedMarkers` follows when several contexts share the transcript. */
export interface RingOf {
  /** Regions in the ring (default K). */
  readonly k?: number;
  /**
   * The ring's table (hex, as the transcript writes it): only its entry writes, and only positions
   * read while OUTPUT_BASE named it, count; a saved context's position is the one its XSAVES saved
   * (docs/sdm/xsave.md §2), and only refill notes of this policy count. Default: every line.
   */
  readonly table?: string;
}

/**
 * Handlers whose markers after the refill are not where the policy puts them, in words. A handler is
 * its MASK_PTRS read (where the CPU is) up to its refill note ("pmi: …", written after the refill's
 * ToPA entry writes), wherever it runs: at its PMI, or later for a late reader.
 */
export function misplacedMarkers(lines: readonly TranscriptLine[], ring: RingOf = {}): string[] {
  const k = ring.k ?? K, table = ring.table;
  const markers = new Map<number, { int: boolean; stop: boolean }>();
  const bad: string[] = [];
  let read: string | undefined, base: string | undefined;
  for (const l of lines) {
    if (l.op === 'topa' && l.index !== undefined && l.index < k && (table === undefined || l.addr === table)) {
      markers.set(l.index, { int: / INT/.test(l.entry ?? ''), stop: / STOP/.test(l.entry ?? '') });
    }
    if (l.op === 'rdmsr' && l.msr === OUTPUT_BASE && l.result !== undefined) base = l.result;
    if (l.op === 'rdmsr' && l.msr === MASK_PTRS && l.result !== undefined && (table === undefined || base === table)) read = l.result;
    if (table !== undefined && l.op === 'xsaves' && l.area?.IA32_RTIT_OUTPUT_BASE === table) read = l.area.IA32_RTIT_OUTPUT_MASK_PTRS;
    if (l.op !== 'note' || !l.value?.startsWith(table === undefined ? 'pmi: ' : 'pmi: protect-unread') || !read) continue;
    const p = decodeTopaPointers(BigInt(read));
    read = undefined;
    const c = (Number(p.entryIndex) + (Number(p.outputOffset) === REGION ? 1 : 0)) % k;
    const stop = (c - 1 + k) % k;
    const wake = (c + Math.floor(k / 2) - 1) % k;
    const want = Array.from({ length: k }, (_, n) => `${n === stop || n === wake ? 'I' : '-'}${n === stop ? 'S' : '-'}`).join(' ');
    const got = Array.from({ length: k }, (_, n) => `${markers.get(n)?.int ? 'I' : '-'}${markers.get(n)?.stop ? 'S' : '-'}`).join(' ');
    if (got !== want) bad.push(`refill at seq ${l.seq} (CPU at entry ${c}): markers ${got}, want ${want}`);
  }
  return bad;
}

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
    const from = ctx.target.lines.length;
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'protect-unread', regionSize: REGION, regions: K }, ...extra }, { workload });
    const bad = misplacedMarkers(ctx.target.lines.slice(from));
    ctx.expect('after every refill: STOP+INT on the entry before unread data, INT half a ring ahead', bad.length === 0 && r.pmis.length > 0,
      bad.length ? bad.slice(0, 2).join('; ') : `${r.pmis.length} refills`);
    const allocs = linesOf(ctx.target.lines, 'alloc').length;
    ctx.expectEqual('the ring was reused, never reallocated (1 table + 4 regions)', allocs, 5);
    ctx.expect('the ring went round: more bytes than the ring holds', r.stream.length > 4 * 4096, `${r.stream.length} bytes`);
    ctx.expectEqual('tracing never stopped at a STOP entry', r.final.stopped, false);
    ctx.expect('every PMI was handled', r.pmis.length >= 2 && everyPmiHandled(r.pmis), `${r.pmis.length} PMIs`);
    ctx.expectLossless(r);
  },
};
