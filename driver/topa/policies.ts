// Where INT and STOP go, and what a PMI does to the tables: the branches of
// the SDM's ToPA PMI algorithm (docs/sdm/output.md §7.1) plus Linux perf's
// reader protection and the single-entry layout of MENTRY=0 CPUs (§4.6).
// Skid guard everywhere (§4.5): INT is never on the last output entry before
// an END or a STOP entry, so the PMI's skid has a region to land in.
import { encodeTopaPointers } from '../hw/output-pointers.js';
import type { HwPointers, PointerUpdate } from '../output/plan.js';
import { DEFAULT_TOPA_BUDGET, type TopaPolicy } from '../request.js';
import type { TopaManager } from './manager.js';
import type { TopaTable } from './table.js';

/** The branches of the PMI algorithm (docs/sdm/output.md §7.1) a refill reports (PointerUpdate.branch). */
export const TOPA_BRANCHES = ['grow', 'chain', 'circular-fresh', 'protect-unread', 'swap-region', 'circularize', 'ring'] as const;
export type TopaBranch = (typeof TOPA_BRANCHES)[number];

/**
 * The branches each policy's refill can take. budget grows only while a batch fits in its one
 * table (the same test as grow's), so it never chains: grow, then circularize once, then ring.
 */
export const POLICY_BRANCHES: { readonly [P in TopaPolicy]: readonly TopaBranch[] } = {
  grow: ['grow', 'chain'],
  chain: ['chain'],
  'circular-fresh': ['circular-fresh'],
  'protect-unread': ['protect-unread'],
  'single-entry': ['swap-region'],
  budget: ['grow', 'circularize', 'ring'],
};

/** A refill's pointer update, with the branch it took. */
type Refilled = PointerUpdate & { readonly branch: TopaBranch };

/** One policy: the first layout, what a PMI does, and whether consumed bytes must be copied at once. */
export interface PolicyImpl {
  /** Regions are reused, so bytes are read out when consumed (not at collection); absent: never. */
  readonly copiesOnConsume?: boolean;
  /**
   * The PMI comes before the INT region is full (MENTRY=0 CPUs: docs/sdm/output.md §4.6), by a margin
   * the SDM does not give: any unread byte in an INT region may be the one that raised it.
   */
  readonly earlyPmi?: boolean;
  init(m: TopaManager): Promise<void>;
  refill(m: TopaManager, hw: HwPointers): Promise<Refilled>;
}

/** A fresh implementation (with its own state) of `policy`. */
export function policyFor(policy: TopaPolicy): PolicyImpl {
  switch (policy) {
    case 'grow': return growOrChain(true);
    case 'chain': return growOrChain(false);
    case 'circular-fresh': return circularFresh();
    case 'protect-unread': return protectUnread();
    case 'single-entry': return singleEntry();
    case 'budget': return budget();
    // Stryker disable next-line all: exhaustiveness check: checkRequest refuses an unknown policy first
    default: { const x: never = policy; throw new Error(`unknown policy ${String(x)}`); }
  }
}

/**
 * Appends `g` output entries to `t`: INT on the second-to-last, STOP on the last (the guard region:
 * if the PMI comes too late, tracing stops instead of running off the table).
 */
async function appendBatch(m: TopaManager, t: TopaTable, g: number): Promise<void> {
  for (let i = 0; i < g; i++) {
    const region = await m.newRegion();
    const index = t.slots.length;
    t.slots.push({ kind: 'output', region, int: i === g - 2, stop: i === g - 1 });
    m.place(t, index, region);
  }
}

/** A new table of `g` regions ending in END to itself; the frontier table's END now links to it. */
async function chainTable(m: TopaManager, frontier: TopaTable, g: number): Promise<void> {
  const next = await m.newTable();
  await appendBatch(m, next, g);
  next.slots.push({ kind: 'end', to: next });
  await next.flush(m.io); // complete before anything links to it
  const e = frontier.endIndex;
  frontier.output(e - 1).stop = false;
  frontier.slots[e] = { kind: 'end', to: next };
  await frontier.flush(m.io);
}

/** grow: entries after the last one while the table has room, then a chained table; chain: always a new table. */
function growOrChain(grow: boolean): PolicyImpl {
  return {
    async init(m) {
      const t = await m.newTable();
      await appendBatch(m, t, m.req.regions);
      t.slots.push({ kind: 'end', to: t });
      await t.flush(m.io);
    },
    async refill(m) {
      const frontier = m.tables[m.tables.length - 1]!;
      const g = m.req.regions;
      const e = frontier.endIndex;
      if (grow && e + g < m.capacity) {
        // GROW (docs/sdm/output.md §7.1): the END moves g slots down; the old guard loses its STOP.
        frontier.output(e - 1).stop = false;
        frontier.slots.splice(e, 1);
        await appendBatch(m, frontier, g);
        frontier.slots.push({ kind: 'end', to: frontier });
        await frontier.flush(m.io);
        return { branch: 'grow' };
      }
      await chainTable(m, frontier, g); // switch to a new table (§7.1)
      return { branch: 'chain' };
    },
  };
}

/** circular-fresh: END back to the base; every filled entry gets a fresh region (§7.1 circular branch). */
function circularFresh(): PolicyImpl {
  let swapFrom = 0;
  return {
    async init(m) {
      const t = await m.newTable();
      const k = m.req.regions;
      for (let i = 0; i < k; i++) {
        const region = await m.newRegion();
        t.slots.push({ kind: 'output', region, int: i <= k - 2, stop: false });
        m.place(t, i, region);
      }
      t.slots.push({ kind: 'end', to: t });
      await t.flush(m.io);
    },
    async refill(m) {
      const c = m.cursor;
      const passedEnd = c.off === m.placements[c.p]!.region.size ? c.p + 1 : c.p;
      const touched = new Set<TopaTable>();
      for (let p = swapFrom; p < passedEnd; p++) {
        const pl = m.placements[p]!;
        const slot = pl.table.output(pl.index);
        if (slot.region !== pl.region) continue;
        slot.region = await m.newRegion(); // the filled region is kept for collection
        m.place(pl.table, pl.index, slot.region);
        touched.add(pl.table);
      }
      swapFrom = Math.max(swapFrom, passedEnd);
      for (const t of touched) await t.flush(m.io);
      return { branch: 'circular-fresh' };
    },
  };
}

/**
 * Arms a reused ring of the first `k` output slots of table 0 for a CPU about to write slot `c`
 * (placement `startP` on): STOP+INT on the entry before unread data, INT half way (Linux perf's
 * `pt_buffer_reset_markers`), and every slot the CPU may now reach placed in ring order.
 */
async function arm(m: TopaManager, startP: number, c: number, k: number): Promise<void> {
  const t = m.tables[0]!;
  const s = (c - 1 + k) % k; // the entry before unread data: STOP+INT
  // The wake-up watermark half a ring ahead. For k ≥ 3 (the policies' minimum) it is never the STOP
  // entry nor the one just before it (c + ⌊k/2⌋ − 1 ≢ c − 1, c − 2 mod k), so the skid guard holds.
  const w = (c + Math.floor(k / 2) - 1) % k;
  for (let i = 0; i < k; i++) { const o = t.output(i); o.stop = i === s; o.int = i === s || i === w; }
  // The CPU may now write slots c, c+1, …, s: make sure each visit is placed, in ring order.
  for (let p = startP, i = c; ; p++, i = (i + 1) % k) {
    if (!m.placements[p]) m.place(t, i, t.output(i).region);
    if (i === s) break;
  }
  await t.flush(m.io);
}

/** Re-arms the ring of `k` slots after the cursor (which consume moved to where the CPU is). */
async function rearm(m: TopaManager, k: number): Promise<void> {
  const { p, off } = m.cursor;
  const pl = m.placements[p]!;
  const full = off === pl.region.size;
  await arm(m, full ? p + 1 : p, full ? (pl.index + 1) % k : pl.index, k);
}

/** protect-unread: one reused ring; STOP+INT on the entry before unread data, INT at half way (Linux perf). */
function protectUnread(): PolicyImpl {
  return {
    copiesOnConsume: true,
    async init(m) {
      const t = await m.newTable();
      for (let i = 0; i < m.req.regions; i++) t.slots.push({ kind: 'output', region: await m.newRegion(), int: false, stop: false });
      t.slots.push({ kind: 'end', to: t });
      await arm(m, 0, 0, m.req.regions);
    },
    async refill(m) {
      await rearm(m, m.req.regions);
      return { branch: 'protect-unread' };
    },
  };
}

/** single-entry: entry 0 = output with INT+STOP, entry 1 = END to the table itself (§4.6, Linux `topa_insert_pages`). */
function singleEntry(): PolicyImpl {
  return {
    earlyPmi: true,
    async init(m) {
      const t = await m.newTable();
      const region = await m.newRegion();
      t.slots.push({ kind: 'output', region, int: true, stop: true }, { kind: 'end', to: t });
      m.place(t, 0, region);
      await t.flush(m.io);
    },
    async refill(m) {
      // The PMI comes before the region is full (§4.6 early PMI): swap in a fresh region and start it at 0.
      const t = m.tables[0]!;
      const slot = t.output(0);
      slot.region = await m.newRegion();
      await t.flush(m.io);
      m.place(t, 0, slot.region);
      m.cursor = { p: m.placements.length - 1, off: 0 };
      return { maskPtrs: encodeTopaPointers({ entryIndex: 0, outputOffset: 0 }), branch: 'swap-region' };
    },
  };
}

/**
 * budget: the SDM algorithm's branch chosen at each PMI (docs/sdm/output.md §7.1) under a memory budget.
 * While another batch of regions fits in the budget and in the table: grow. Then, once: circularize —
 * every byte still only in memory is copied out, the guard STOP is lifted, and from then on the one
 * table is a ring whose regions are copied out at each PMI and reused, with STOP+INT on the entry
 * before unread data so a late handler stops the CPU rather than losing data silently.
 */
function budget(): PolicyImpl {
  const grow = growOrChain(true);
  let ring = 0; // slots in the ring once circular, 0 before
  return {
    get copiesOnConsume() { return ring > 0; },
    init: (m) => grow.init(m),
    async refill(m, hw) {
      if (ring === 0) {
        const t = m.tables[0]!;
        const held = t.endIndex * m.req.regionSize;
        const step = m.req.regions * m.req.regionSize;
        if (held + step <= (m.req.budget ?? DEFAULT_TOPA_BUDGET) && t.endIndex + m.req.regions < m.capacity) return grow.refill(m, hw);
        ring = t.endIndex;
        await m.chunks.copyAll((addr, length) => m.io.read(addr, length));
        await rearm(m, ring);
        return { branch: 'circularize' };
      }
      await rearm(m, ring);
      return { branch: 'ring' };
    },
  };
}
