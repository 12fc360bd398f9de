// ToPA (Table of Physical Addresses) entries: the field table, size encodings,
// a builder, and the operational-error rules a CPU applies when it reaches an
// entry (docs/sdm/output.md §4.2, §4.7; SDM Vol. 3C "ToPA Table Entry Format" and
// "ToPA Errors").
import { addr, bitRange, bits, describeViolation, flag, pow2, registerDefiner, uint } from './field.js';
import { hex } from '../base/hex.js';
import { maxPhysAddrLimit } from './cpuid.js';
import { PtError } from '../base/errors.js';

/** What a ToPA entry's reserved bits depend on: only MAXPHYADDR. `PtCaps` satisfies it. */
export interface TopaCaps { readonly maxPhysAddr: number }

/** One 64-bit ToPA entry (docs/sdm/output.md §4.2). Reserved: bits 1, 3, 5, 11:10 and ≥ MAXPHYADDR. */
export const TOPA_ENTRY = registerDefiner<TopaCaps>()('ToPA entry', {
  END: flag(0),
  INT: flag(2),
  STOP: flag(4),
  Size: uint(9, 6),
  Base: addr(51, 12, { limit: maxPhysAddrLimit }),
});

/** Bytes in one ToPA entry; an entry's table offset is index × 8. */
export const TOPA_ENTRY_BYTES = 8;
/** Largest Size encoding: 15 = 128 MiB (docs/sdm/output.md §4.2). */
export const TOPA_MAX_SIZE_ENCODING = 15;
/** The table offset at which the CPU wraps to entry 0 of the current table (docs/sdm/output.md §4.3, Open Question 10). */
export const TOPA_MAX_TABLE_OFFSET = 0x0fff_fff8n;

/** Region size in bytes of Size encoding `enc`: 4 KiB << enc (docs/sdm/output.md §4.2). */
export function topaSizeBytes(enc: number): bigint {
  if (!Number.isInteger(enc) || enc < 0 || enc > TOPA_MAX_SIZE_ENCODING) {
    throw new PtError('topa_error', `ToPA Size encoding ${enc} is not in 0..${TOPA_MAX_SIZE_ENCODING}`);
  }
  return pow2(12 + enc);
}

/** The Size encoding of a region of `bytes` bytes; a typed error unless it is 4 KiB << 0..15. */
export function topaSizeEncoding(bytes: bigint | number): number {
  const b = BigInt(bytes);
  for (let enc = 0; enc <= TOPA_MAX_SIZE_ENCODING; enc++) if (topaSizeBytes(enc) === b) return enc;
  const why = b > 0n && (b & (b - 1n)) === 0n ? 'outside 4 KiB … 128 MiB' : 'not a power of two';
  throw new PtError('topa_error', `ToPA region size ${b} bytes is ${why}`);
}

/** What `topaEntry` builds: an output region (END=0) or a link to the next table (END=1). */
export interface TopaEntrySpec {
  /** Physical base of the region or of the next table; 4 KiB aligned. */
  readonly base: bigint;
  /** Region size in bytes (4 KiB … 128 MiB, a power of two). Ignored by the CPU when END=1; default 4 KiB. */
  readonly size?: bigint | number;
  readonly end?: boolean;
  readonly int?: boolean;
  readonly stop?: boolean;
}

/** Encodes one ToPA entry. Throws `topa_error` for a bad size or a base that is not 4 KiB aligned. */
export function topaEntry(spec: TopaEntrySpec): bigint {
  if (spec.base < 0n || (spec.base & 0xfffn) !== 0n) {
    throw new PtError('topa_error', `ToPA entry base 0x${spec.base.toString(16)} is not 4 KiB aligned`);
  }
  return TOPA_ENTRY.encode({
    END: spec.end ?? false,
    INT: spec.int ?? false,
    STOP: spec.stop ?? false,
    Size: topaSizeEncoding(spec.size ?? 4096),
    Base: spec.base,
  });
}

/** Where the CPU meets an entry: the table it is in, its offset there, the CPU's MENTRY and MAXPHYADDR. */
export interface TopaEntryContext {
  /** proc_trace_table_base: the current table (from OUTPUT_BASE or an END link). */
  readonly tableBase: bigint;
  /** proc_trace_table_offset: byte offset of the entry in the table (index × 8). */
  readonly tableOffset: bigint;
  /** L14.0.ECX[1]: the table may hold multiple output entries. */
  readonly multiEntry: boolean;
  readonly maxPhysAddr: number;
}

/** The rule of docs/sdm/output.md §4.7 an entry breaks ("1", "2a", "2b", "2c", "4a", "4b", "4c"). */
export type TopaRule = '1' | '2a' | '2b' | '2c' | '4a' | '4b' | '4c';

/** A violated ToPA rule, as data: the simulator turns it into STATUS.Error (an operational error). */
export interface TopaProblem {
  readonly rule: TopaRule;
  readonly message: string;
}


/**
 * The first ToPA rule (docs/sdm/output.md §4.7) that `entry` breaks when the CPU reaches it at
 * `ctx`, or undefined. Rule 3 (illegal output offset) and rule 5 (restricted memory) depend on
 * more than the entry and are the caller's.
 */
export function topaEntryProblem(entry: bigint, ctx: TopaEntryContext): TopaProblem | undefined {
  const e = TOPA_ENTRY.decode(entry);
  // 2a: the table base must be 4 KiB aligned (only OUTPUT_BASE can make it otherwise).
  if ((ctx.tableBase & 0xfffn) !== 0n) {
    return { rule: '2a', message: `table base ${hex(ctx.tableBase)} is not 4 KiB aligned` };
  }
  // 2c before 1: an address bit ≥ MAXPHYADDR is both; report it as the address it is.
  const maxPhys = ctx.maxPhysAddr;
  if (maxPhys < 52 && bits(entry, 51, maxPhys) !== 0n) {
    return { rule: '2c', message: `Base ${hex(e.Base)} sets physical-address bits ≥ MAXPHYADDR (${maxPhys})` };
  }
  const rsvd = TOPA_ENTRY.violation(entry, { maxPhysAddr: maxPhys });
  if (rsvd) {
    return { rule: '1', message: `${describeViolation(rsvd)} in ToPA entry ${hex(entry)}` };
  }
  if (e.END && (e.INT || e.STOP)) {
    return { rule: '4a', message: `END=1 together with ${e.INT ? 'INT=1' : 'STOP=1'}` };
  }
  if (e.END && ctx.tableOffset === 0n) return { rule: '4b', message: 'END=1 in entry 0 of a table' };
  if (!e.END) {
    const alignMask = topaSizeBytes(e.Size) - 1n;
    if ((e.Base & alignMask) !== 0n) {
      return { rule: '2b', message: `output region base ${hex(e.Base)} is not aligned to its size ${hex(alignMask + 1n)}` };
    }
  }
  if (!ctx.multiEntry) {
    // docs/sdm/output.md §4.6: entry 0 = output, entry 1 = END back to the table base; nothing else.
    if (ctx.tableOffset === 8n && !e.END) return { rule: '4c', message: 'single-entry ToPA: entry 1 must be END=1' };
    if (ctx.tableOffset === 8n && e.Base !== ctx.tableBase) {
      return { rule: '4c', message: `single-entry ToPA: entry 1 links to ${hex(e.Base)}, not to the table base ${hex(ctx.tableBase)}` };
    }
    // Model choice (docs/sdm/output.md §4.7 validEntry): anything beyond entry 1 is illegal.
    if (ctx.tableOffset > 8n) return { rule: '4c', message: `single-entry ToPA: no entry at table offset ${hex(ctx.tableOffset)}` };
  }
  return undefined;
}

/** Bits of a ToPA entry that are reserved for `maxPhysAddr` (1, 3, 5, 11:10, ≥ MAXPHYADDR). */
export function topaReservedMask(maxPhysAddr: number): bigint {
  return TOPA_ENTRY.reservedMaskFor({ maxPhysAddr });
}

/** Region size of a decoded output entry, in bytes. */
export function topaEntrySize(entry: bigint): bigint {
  return topaSizeBytes(TOPA_ENTRY.decode(entry).Size);
}

/** Bits MAXPHYADDR−1:12 of an entry: the base it points at. */
export function topaEntryBase(entry: bigint): bigint {
  return entry & bitRange(51, 12);
}

/** One entry in words, for transcripts: "output 0x12000 4K INT STOP" or "END → 0x11000". */
export function describeTopaEntry(entry: bigint): string {
  const e = TOPA_ENTRY.decode(entry);
  if (e.END) return `END → ${hex(e.Base)}`;
  const kib = Number(topaSizeBytes(e.Size) >> 10n);
  const size = kib >= 1024 ? `${kib >> 10}M` : `${kib}K`;
  return ['output', hex(e.Base), size, ...(e.INT ? ['INT'] : []), ...(e.STOP ? ['STOP'] : [])].join(' ');
}
