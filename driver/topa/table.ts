// One ToPA table as the driver keeps it: a 4 KiB-aligned page of 8-byte
// entries (docs/sdm/output.md §4.2), mirrored in memory the CPU reads.
import { PtError } from '../base/errors.js';
import { topaEntry } from '../hw/topa.js';
import type { TargetIo } from '../io.js';
import type { PhysRegion } from '../target.js';

/** An output entry (END=0) with its INT/STOP markers. */
export interface OutputSlot {
  readonly kind: 'output';
  region: PhysRegion;
  int: boolean;
  stop: boolean;
}

/** A link (END=1) to the next table (possibly this one). */
export interface EndSlot {
  readonly kind: 'end';
  to: TopaTable;
}

/** A used table slot. */
export type Slot = OutputSlot | EndSlot;

/** A ToPA table: its page and its used slots 0..n-1 (the CPU never reads past the END). */
export class TopaTable {
  readonly slots: Slot[] = [];

  constructor(readonly page: PhysRegion, readonly capacity: number) {}

  get base(): bigint { return this.page.base; }

  /** The output slot at `i`; throws if it is not one. */
  output(i: number): OutputSlot {
    const s = this.slots[i];
    // Stryker disable next-line all: a guard against misuse or a broken invariant that no valid scenario reaches (test/driver/guards.test.ts)
    if (s?.kind !== 'output') throw new PtError('bad_state', `ToPA table 0x${this.base.toString(16)}: slot ${i} is not an output entry`);
    return s;
  }

  /** Index of the END slot. */
  get endIndex(): number {
    return this.slots.findIndex((s) => s.kind === 'end');
  }

  /** The 64-bit entry of slot `i` (docs/sdm/output.md §4.2; END entries carry no INT/STOP: §4.7 rule 4a). */
  entry(i: number): bigint {
    const s = this.slots[i];
    // Stryker disable next-line all: a guard against misuse or a broken invariant that no valid scenario reaches (test/driver/guards.test.ts)
    if (!s) throw new PtError('bad_state', `ToPA table 0x${this.base.toString(16)}: slot ${i} is unused`);
    return s.kind === 'end'
      ? topaEntry({ base: s.to.base, end: true })
      : topaEntry({ base: s.region.base, size: s.region.size, int: s.int, stop: s.stop });
  }

  /** Writes every used entry to memory in one physical write. */
  async flush(io: TargetIo): Promise<void> {
    const bytes = new Uint8Array(this.slots.length * 8);
    const dv = new DataView(bytes.buffer);
    for (let i = 0; i < this.slots.length; i++) dv.setBigUint64(i * 8, this.entry(i), true);
    await io.write(this.base, bytes, 'topa-table');
  }
}
