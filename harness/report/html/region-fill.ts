// Each output region's fill over time (docs/report.md "Region fill"), from the pointer samples of
// pointer-reads.ts and the tables of topa-state.ts. At a sample the region of the current entry
// holds OutputOffset bytes; the regions the pointer moved past since the previous sample of that
// table are full (the CPU fills a table's regions in order, following an END back to the table's
// start: SDM Vol. 3C "Table of Physical Addresses (ToPA)"); a region the driver puts into a table
// starts empty. A single-range output buffer holds OutputOffset bytes.
import type { FillSeries, FillView } from './view-model.js';
import { PointerTracker, type PointerSample } from './pointer-reads.js';
import { TopaState } from './topa-state.js';
import type { TLine } from './transcript-lines.js';

/** How much one run's chart may carry (the page holds hundreds of runs: docs/report.md "Size and speed"). */
export const FILL_BUDGET = { series: 16, points: 800 } as const;

interface Series { readonly region: string; readonly size: number; readonly role: number; points: [number, number][] }

/** Accumulates the points of every region, by its buffer name. */
class FillPoints {
  readonly series = new Map<string, Series>();

  add(region: string, role: number, size: number, t: number, bytes: number): void {
    const s = this.series.get(region) ?? { region, size, role, points: [] };
    this.series.set(region, s);
    const last = s.points[s.points.length - 1];
    if (last !== undefined && last[0] === t) last[1] = Math.max(last[1], bytes);
    else s.points.push([t, Math.min(bytes, size)]);
  }
}

/** The fill of every region of `lines`; undefined when the transcript holds no pointer sample. */
export function regionFill(lines: readonly TLine[], budget = FILL_BUDGET): FillView | undefined {
  const topa = new TopaState(), ptrs = new PointerTracker(), pts = new FillPoints();
  const last = new Map<bigint, PointerSample>();
  let samples = 0, topaSamples = 0;
  const put = (base: bigint, size: number, t: number, bytes: number): void => {
    const role = topa.roles.find(base)?.role ?? Number.MAX_SAFE_INTEGER;
    pts.add(topa.name(base), role, size, t, bytes);
  };
  for (const l of lines) {
    const change = topa.apply(l);
    if (change && !change.after.end && change.before?.base !== change.after.base) put(change.after.base, change.after.size, l.t, 0);
    const s = ptrs.apply(l);
    if (s === undefined) continue;
    samples++;
    if (s.mode === 'single') {
      const buf = topa.roles.find(s.table);
      const size = buf ? Number(topa.roles.buffer(buf.role)!.size) : s.offset;
      put(s.table, size, s.t, s.offset);
      continue;
    }
    const entries = topa.tables.get(s.table);
    if (entries === undefined) continue;
    topaSamples++;
    const prev = last.get(s.table);
    if (s.how === 'read' && prev !== undefined && prev.index !== s.index) {
      for (const e of passed(topa, s.table, prev.index, s.index)) put(e.base, e.size, s.t, e.size);
    }
    if (s.how === 'read' && prev === undefined) {
      // First seen in a table the pointer reached through another's END: that one filled to its end, this one up to here.
      const from = topa.linkingTo(s.table).find((t) => last.has(t));
      if (from !== undefined) {
        for (const e of [...passed(topa, from, last.get(from)!.index), ...passed(topa, s.table, 0, s.index)]) put(e.base, e.size, s.t, e.size);
        last.delete(from);
      }
    }
    const cur = entries.get(s.index);
    if (cur !== undefined && !cur.end) put(cur.base, cur.size, s.t, s.offset);
    last.set(s.table, s);
  }
  if (samples === 0) return undefined;
  return fillView(pts, topaSamples > 0 ? 'topa' : 'single', samples, budget);
}

/**
 * The output entries from `from` (inclusive) up to `to` (exclusive), following an END back to
 * entry 0 of the same table; without `to`, up to the END that links to another table. When the
 * walk cannot reach `to` (a hole, a link elsewhere), only the entry at `from` counts.
 */
function passed(topa: TopaState, table: bigint, from: number, to?: number): { base: bigint; size: number }[] {
  const entries = topa.tables.get(table)!;
  const out: { base: bigint; size: number }[] = [];
  let i = from;
  for (let steps = 0; i !== to && steps <= entries.size; steps++) {
    const e = entries.get(i);
    if (e === undefined) break;
    if (e.end && e.base !== table) return to === undefined ? out : out.slice(0, 1);
    if (e.end) { i = 0; continue; }
    out.push(e);
    i++;
  }
  return i === to ? out : out.slice(0, 1);
}

/**
 * The series worth drawing (some bytes written); beyond the budget the busiest (most samples), in
 * allocation order; their points thinned evenly when too many.
 */
function fillView(pts: FillPoints, mode: FillView['mode'], samples: number, budget: typeof FILL_BUDGET): FillView {
  const written = [...pts.series.values()].filter((s) => s.points.some(([, b]) => b > 0));
  const drawn = [...written].sort((a, b) => b.points.length - a.points.length || a.role - b.role).slice(0, budget.series).sort((a, b) => a.role - b.role);
  const total = drawn.reduce((n, s) => n + s.points.length, 0);
  const step = Math.max(1, Math.ceil(total / budget.points));
  const series: FillSeries[] = drawn.map((s) => ({
    region: s.region, size: s.size,
    points: step === 1 ? s.points : s.points.filter((_, i) => i % step === 0 || i === s.points.length - 1),
  }));
  return { mode, series, more: written.length - drawn.length, samples, thinned: step > 1 };
}
