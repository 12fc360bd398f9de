// The ToPA layout of a run (docs/report.md "ToPA layout"): every table the transcript's `topa`
// lines wrote, by buffer role, with each entry as the driver last left it (region, size, INT, STOP,
// END) and how often it was written.
import { TopaState } from './topa-state.js';
import type { TLine } from './transcript-lines.js';
import type { TopaTableView } from './view-model.js';

/** Tables and entries listed per run at most (a growing table can reach hundreds of entries). */
export const TOPA_BUDGET = { tables: 8, entries: 48 } as const;

/** The layout: the tables listed, and how many more there were. */
export interface TopaLayout {
  readonly tables: readonly TopaTableView[];
  readonly moreTables: number;
}

/** The ToPA tables of `lines`, in the order they were first written. */
export function topaLayout(lines: readonly TLine[], budget = TOPA_BUDGET): TopaLayout {
  const topa = new TopaState();
  for (const l of lines) topa.apply(l);
  const tables = [...topa.tables].slice(0, budget.tables).map(([addr, entries]): TopaTableView => {
    const sorted = [...entries].sort((a, b) => a[0] - b[0]);
    return {
      role: topa.name(addr), addr: `0x${addr.toString(16)}`,
      entries: sorted.slice(0, budget.entries).map(([index, e]) => ({
        index, region: topa.name(e.base), size: e.size, int: e.int, stop: e.stop, end: e.end, writes: e.writes,
      })),
      more: Math.max(0, sorted.length - budget.entries),
    };
  });
  return { tables, moreTables: Math.max(0, topa.tables.size - budget.tables) };
}
