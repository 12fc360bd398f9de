// ToPA entries as the model's CPU reads them (docs/sdm/output.md §4.2, §4.7),
// written independently of driver/hw/topa.ts so a shared bug cannot cancel out.

/** A decoded 64-bit ToPA entry. */
export interface TopaEntry {
  readonly raw: bigint;
  readonly END: boolean;
  readonly INT: boolean;
  readonly STOP: boolean;
  /** Size encoding 9:6: region size = 4 KiB << Size. */
  readonly Size: number;
  /** Bits MAXPHYADDR−1:12, in place. */
  readonly base: bigint;
}

/** Decodes an entry (no validity checks). */
export function decodeTopaEntry(raw: bigint): TopaEntry {
  return {
    raw,
    END: (raw & 1n) !== 0n,
    INT: (raw & 4n) !== 0n,
    STOP: (raw & 0x10n) !== 0n,
    Size: Number((raw >> 6n) & 0xfn),
    base: raw & ~0xfffn & 0x000f_ffff_ffff_f000n,
  };
}

/** Region size in bytes: 4 KiB << Size (docs/sdm/output.md §4.2). */
export function regionSize(e: TopaEntry): number {
  return 4096 * 2 ** e.Size;
}

/** Which §4.7 rule an entry breaks. */
export type TopaErrorRule = '1-reserved' | '2a-table-alignment' | '2b-region-alignment' | '4a-end-with-int-stop'
  | '4b-end-in-entry-0' | '4c-single-entry-layout' | '3-output-offset';

/**
 * The operational error of docs/sdm/output.md §4.7 that reaching `e` at `tableOffset` of the table at
 * `tableBase` raises, if any. `mentry` = L14.0.ECX[1].
 */
export function topaEntryError(
  e: TopaEntry, tableBase: bigint, tableOffset: bigint, maxPhysAddr: number, mentry: boolean,
): TopaErrorRule | undefined {
  if ((tableBase & 0xfffn) !== 0n) return '2a-table-alignment';
  // 1: bits 1, 3, 5, 11:10 (0xC2A) and MAXPHYADDR and above.
  const rsvd = 0xc2an | (((1n << 64n) - 1n) & ~((1n << BigInt(maxPhysAddr)) - 1n));
  if ((e.raw & rsvd) !== 0n) return '1-reserved';
  if (e.END && (e.INT || e.STOP)) return '4a-end-with-int-stop';
  if (e.END && tableOffset === 0n) return '4b-end-in-entry-0';
  if (!e.END && (e.base & (BigInt(regionSize(e)) - 1n)) !== 0n) return '2b-region-alignment';
  if (!mentry) {
    if (tableOffset === 8n && (!e.END || e.base !== tableBase)) return '4c-single-entry-layout';
    if (tableOffset > 8n) return '4c-single-entry-layout'; // model: nothing beyond entry 1 is legal
  }
  return undefined;
}
