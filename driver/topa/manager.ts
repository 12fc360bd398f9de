// The ToPA manager: size-aligned regions from target.phys,
// tables in physical memory, and the place of every region in write order,
// so collection can stitch the stream (docs/sdm/output.md §4, §8). Where INT and
// STOP go is the policy's (topa/policies.ts).
import { ChunkList } from '../collect/chunks.js';
import { PtError } from '../base/errors.js';
import { decodeTopaPointers, encodeTopaPointers } from '../hw/output-pointers.js';
import type { TargetIo } from '../io.js';
import type { HwPointers, OutputPlan, PointerInfo, PointerUpdate } from '../output/plan.js';
import type { TopaRequest } from '../request.js';
import type { PhysRegion } from '../target.js';
import { policyFor, type PolicyImpl } from './policies.js';
import { TopaTable } from './table.js';
import type { OwnedBuffer } from '../teardown.js';

/** One visit of the CPU to an output region: table, slot and region, in write order. */
export interface Placement {
  readonly table: TopaTable;
  readonly index: number;
  readonly region: PhysRegion;
}

/** The CPU's position as a placement and an offset in its region. */
export interface Position {
  readonly p: number;
  readonly off: number;
}

/** Bytes of a ToPA table page (docs/sdm/output.md §4.2: tables are 4 KiB aligned). */
export const TABLE_PAGE = 4096;

/** ToPA output with a policy; implements the driver's OutputPlan. */
export class TopaManager implements OutputPlan {
  readonly scheme = 'topa';
  readonly chunks = new ChunkList();
  readonly tables: TopaTable[] = [];
  readonly placements: Placement[] = [];
  /** Everything up to here is accounted for in `chunks`. */
  cursor: Position = { p: 0, off: 0 };
  /** Placements before this one hold no INT region still waiting for its PMI's refill. */
  private serviced = 0;
  private readonly owned: OwnedBuffer[] = [];
  private readonly policy: PolicyImpl;

  private constructor(readonly io: TargetIo, readonly req: TopaRequest) {
    this.policy = policyFor(req.policy);
  }

  /**
   * Allocates and writes the first table(s) of `req`'s policy. If that fails part-way, what was
   * allocated is freed again before the error goes on: tracing has not been enabled on it.
   */
  static async create(io: TargetIo, req: TopaRequest): Promise<TopaManager> {
    const m = new TopaManager(io, req);
    try {
      await m.policy.init(m);
    } catch (e) {
      for (const b of m.owned.splice(0)) await io.free(b.region).catch(() => undefined);
      throw e;
    }
    return m;
  }

  get initial(): HwPointers {
    const first = this.tables[0];
    // Stryker disable next-line all: unreachable: TopaManager.create writes the first table before the manager is handed out
    if (!first) throw new PtError('bad_state', 'ToPA manager has no table');
    return { outputBase: first.base, maskPtrs: encodeTopaPointers({ entryIndex: 0, outputOffset: 0 }) };
  }

  /** Entries per table (the END included). */
  get capacity(): number {
    return this.req.tableEntries ?? 512;
  }

  /** A new, empty table page (4 KiB aligned). */
  async newTable(): Promise<TopaTable> {
    const page = await this.io.alloc(TABLE_PAGE, TABLE_PAGE);
    this.owned.push({ region: page, role: 'ToPA table' });
    const t = new TopaTable(page, this.capacity);
    this.tables.push(t);
    return t;
  }

  /** A new output region, aligned to its size (docs/sdm/output.md §4.7 rule 2b). */
  async newRegion(): Promise<PhysRegion> {
    const r = await this.io.alloc(this.req.regionSize, this.req.regionSize);
    this.owned.push({ region: r, role: 'output region' });
    return r;
  }

  /** Records that the CPU will write `region` (slot `index` of `table`) after every earlier placement. */
  place(table: TopaTable, index: number, region: PhysRegion): void {
    this.placements.push({ table, index, region });
  }

  /** The placement and offset the hardware pointers `hw` denote, searching from the cursor (docs/sdm/output.md §8). */
  resolve(hw: HwPointers): Position {
    let t = this.tables.find((x) => x.base === hw.outputBase);
    // Stryker disable next-line all: a guard against misuse or a broken invariant that no valid scenario reaches (test/driver/guards.test.ts)
    if (!t) throw new PtError('topa_error', `OUTPUT_BASE 0x${hw.outputBase.toString(16)} is not one of this run's ToPA tables`);
    let { entryIndex: idx, outputOffset: off } = decodeTopaPointers(hw.maskPtrs);
    const s = t.slots[idx];
    // A pointer at an END entry means the start of the table it links to (followed lazily: §4.3).
    if (s?.kind === 'end') { t = s.to; idx = 0; off = 0; }
    for (let p = this.cursor.p; p < this.placements.length; p++) {
      const pl = this.placements[p]!;
      if (pl.table === t && pl.index === idx) return { p, off };
    }
    throw new PtError('topa_error', `ToPA pointer (table 0x${t.base.toString(16)}, entry ${idx}) is not a region this run placed`);
  }

  /** Accounts for every byte from the cursor up to `hw`; `copy` reads the bytes now (the region will be reused). */
  async consume(hw: HwPointers): Promise<void> {
    const pos = this.resolve(hw);
    for (let p = this.cursor.p; p <= pos.p; p++) {
      const pl = this.placements[p]!;
      const from = p === this.cursor.p ? this.cursor.off : 0;
      const to = p === pos.p ? pos.off : pl.region.size;
      if (to <= from) continue;
      const addr = pl.region.base + BigInt(from);
      const data = this.policy.copiesOnConsume ? await this.io.read(addr, to - from) : undefined;
      this.chunks.push(data ? { addr, length: to - from, data } : { addr, length: to - from });
    }
    this.cursor = pos;
  }

  /** The policy's refill (docs/sdm/output.md §7.1); every INT region filled up to the cursor is then serviced. */
  async refill(hw: HwPointers): Promise<PointerUpdate> {
    const c = this.cursor;
    const update = await this.policy.refill(this, hw);
    this.serviced = Math.max(this.serviced, this.servicedUpTo(c), this.cursor.p);
    return update;
  }

  /** After an operational error, when no refill follows: the INT regions filled up to the cursor are serviced all the same. */
  unrefilled(): void {
    this.serviced = Math.max(this.serviced, this.servicedUpTo(this.cursor));
  }

  /**
   * The first placement not serviced once the CPU's output reached `c`: the one after `c`'s when
   * it is full, else `c`'s. (A policy that then moves the cursor to a fresh placement, as
   * single-entry's swap does, retires every one before it too: `refill`.)
   */
  private servicedUpTo(c: Position): number {
    return c.off === this.placements[c.p]?.region.size ? c.p + 1 : c.p;
  }

  /**
   * Whether an INT region not yet serviced filled by `hw`: a ToPA PMI now may be this plan's
   * (docs/sdm/output.md §7.3). With an early PMI (single-entry, §4.6) the margin is unknown, so an INT
   * region not serviced counts once it holds a byte: servicing it early costs a region swap and loses
   * nothing; missing its PMI would leave the context to stop at its full STOP+INT entry.
   */
  intFilled(hw: HwPointers): boolean {
    const pos = this.resolve(hw);
    for (let p = this.serviced; p <= pos.p; p++) {
      const pl = this.placements[p]!;
      const slot = pl.table.slots[pl.index];
      const written = this.policy.earlyPmi === true && pos.off > 0;
      const full = p < pos.p || pos.off === pl.region.size || written;
      if (full && slot?.kind === 'output' && slot.int) return true;
    }
    return false;
  }

  pointerInfo(hw: HwPointers): PointerInfo {
    const t = this.tables.find((x) => x.base === hw.outputBase);
    const { entryIndex: idx, outputOffset: off } = decodeTopaPointers(hw.maskPtrs);
    const s = t?.slots[idx];
    if (s?.kind !== 'output' || off !== s.region.size || !s.stop) return { atFullStopEntry: false };
    // Move on to the next slot, which the policy keeps valid (an END or an output entry: §7.2 note).
    return { atFullStopEntry: true, nextEntry: encodeTopaPointers({ entryIndex: idx + 1, outputOffset: 0 }) };
  }

  pastStop(): void {
    this.cursor = { p: this.cursor.p + 1, off: 0 };
  }

  buffers(): readonly OwnedBuffer[] {
    return this.owned;
  }
}
