// Decoded packets as a struct of arrays, filled by PacketDecoder.decodeBatch():
// one typed-array column per field, so a consumer loops over plain arrays
// instead of calling next() once per packet. Every field of every PacketRecord
// fits: 64-bit values in `lo`/`hi` (int32 bits), the small fields of a kind
// packed into `a` (layout below, the single place it is defined).
import { HOT_CAPACITY, hotColumns, takeRegion } from './hot-loop.js';
import { DecodeError, PacketKind, type PacketRecord } from './record.js';

/** Options of a PacketBatch. */
export interface PacketBatchOptions {
  /**
   * Default false. true: decodeBatch() also keeps `checksum` (checksum.ts
   * algorithm) over every packet it stores, computed in the same pass.
   */
  checksum?: boolean;
  /**
   * Default true: the columns may be views of a hot-loop.ts pool region
   * (decodeBatch() then writes them in place). false: own arrays, e.g. to
   * transfer their buffers to a worker.
   */
  pooled?: boolean;
}

/**
 * Columns of up to `capacity` decoded packets; slot j is packet j of the last
 * decodeBatch() call (j < count). Per kind:
 *
 * - `kind`, `size`, `offset`: as PacketRecord (error: kind 0, size 0).
 * - `lo`, `hi`: PacketRecord.lo/hi as int32 bits (`>>> 0` gives the uint32);
 *   0 for an error.
 * - `a`: error → DecodeError code; tnt.8/tnt.64 → n; tip/tip.pge/tip.pgd/fup
 *   → IPBytes; mtc → CTC; cbr → ratio; pip → NR; exstop/bep → IP;
 *   evd → type; mode.exec → CS.L | CS.D << 1 | IF << 2; mode.tsx → InTX |
 *   TXAbort << 1; tma → CTC | FastCounter << 16; pwre → state | sub-state << 4
 *   | HW << 8; pwrx → last | deepest << 4 | interrupt << 8 | store << 9 |
 *   autonomous << 10; ptw → PayloadBytes | IP << 2; bbp → SZ | type << 1;
 *   bip → ID | SZ << 5; cfe → IP | type << 1 | vector << 8; trig → IP |
 *   ICNTV << 1 | MULT << 2 | TRBV << 3 | ICNT << 11; other kinds → 0.
 */
export class PacketBatch {
  /** Number of slots. */
  readonly capacity: number;
  /** Slots filled by the last decodeBatch(). */
  count = 0;
  /** Error records (kind 0) among them. */
  errors = 0;
  readonly kind: Uint8Array;
  readonly size: Uint8Array;
  readonly offset: Float64Array;
  readonly lo: Int32Array;
  readonly hi: Int32Array;
  readonly a: Int32Array;
  /**
   * First slot of the hot-loop.ts pool region the columns are views of, or -1
   * (own arrays: decodeBatch() copies its fast-path packets in). The first
   * few batches of up to HOT_CAPACITY (4096) packets get a region, for good:
   * reuse a batch rather than make one per decode.
   */
  readonly region: number;
  /** Whether decodeBatch() keeps `hash` (options.checksum). */
  readonly checksumming: boolean;
  /** The running checksum as int32 bits (`checksum` is the uint32 value). */
  hash: number;

  constructor(capacity = 4096, opts: PacketBatchOptions = {}) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`PacketBatch: capacity ${capacity}`);
    this.capacity = capacity;
    const region = (opts.pooled ?? true) && capacity <= HOT_CAPACITY ? takeRegion() : -1;
    this.region = region;
    if (region >= 0) {
      const c = hotColumns;
      const end = region + capacity;
      this.kind = c.kind.subarray(region, end);
      this.size = c.size.subarray(region, end);
      this.offset = c.offset.subarray(region, end);
      this.lo = c.lo.subarray(region, end);
      this.hi = c.hi.subarray(region, end);
      this.a = c.a.subarray(region, end);
    } else {
      this.kind = new Uint8Array(capacity);
      this.size = new Uint8Array(capacity);
      this.offset = new Float64Array(capacity);
      this.lo = new Int32Array(capacity);
      this.hi = new Int32Array(capacity);
      this.a = new Int32Array(capacity);
    }
    this.checksumming = opts.checksum ?? false;
    this.hash = CHECKSUM_START_I32;
  }

  /** The checksum of every packet decoded into this batch so far (options.checksum). */
  get checksum(): number {
    return this.hash >>> 0;
  }

  /** Starts the running checksum again (e.g. to reuse the batch for another stream). */
  resetChecksum(): void {
    this.hash = CHECKSUM_START_I32;
  }

  /** Fills `rec` from slot `j` (the PacketRecord next() would have produced). */
  read(j: number, rec: PacketRecord): PacketRecord {
    const kind = this.kind[j]!;
    const a = this.a[j]!;
    rec.kind = kind;
    rec.size = this.size[j]!;
    rec.offset = this.offset[j]!;
    rec.error = kind === PacketKind.error ? a : DecodeError.none;
    rec.lo = this.lo[j]! >>> 0;
    rec.hi = this.hi[j]! >>> 0;
    unpackSmall(kind, a, rec);
    return rec;
  }
}

/** FNV-1a offset basis (checksum.ts CHECKSUM_INIT) as int32 bits. */
const CHECKSUM_START_I32 = 0x811c9dc5 | 0;

/** Stores `rec` into slot `j` (layout of PacketBatch). */
export function storeRecord(batch: PacketBatch, j: number, rec: PacketRecord): void {
  const error = rec.kind === PacketKind.error;
  batch.kind[j] = rec.kind;
  batch.size[j] = rec.size;
  batch.offset[j] = rec.offset;
  // An error record's lo/hi are stale values of an earlier packet: stored as 0.
  batch.lo[j] = error ? 0 : rec.lo;
  batch.hi[j] = error ? 0 : rec.hi;
  batch.a[j] = packSmall(rec);
}

/** The `a` column value of a record (layout of PacketBatch). */
export function packSmall(rec: PacketRecord): number {
  switch (rec.kind) {
    case PacketKind.error: return rec.error;
    case PacketKind['tnt.8']: case PacketKind['tnt.64']: return rec.n;
    case PacketKind.tip: case PacketKind['tip.pge']: case PacketKind['tip.pgd']: case PacketKind.fup: return rec.ipBytes;
    case PacketKind.mtc: return rec.ctc;
    case PacketKind.cbr: return rec.ratio;
    case PacketKind.pip: return rec.nr;
    case PacketKind.exstop: case PacketKind.bep: return rec.ip;
    case PacketKind.evd: return rec.evdType;
    case PacketKind['mode.exec']: return rec.csl | (rec.csd << 1) | (rec.iflag << 2);
    case PacketKind['mode.tsx']: return rec.intx | (rec.abrt << 1);
    case PacketKind.tma: return rec.ctc | (rec.fc << 16);
    case PacketKind.pwre: return rec.state | (rec.subState << 4) | (rec.hw << 8);
    case PacketKind.pwrx:
      return rec.last | (rec.deepest << 4) | (rec.interrupt << 8) | (rec.store << 9) | (rec.autonomous << 10);
    case PacketKind.ptw: return rec.plc | (rec.ip << 2);
    case PacketKind.bbp: return rec.sz | (rec.blockType << 1);
    case PacketKind.bip: return rec.id | (rec.sz << 5);
    case PacketKind.cfe: return rec.ip | (rec.cfeType << 1) | (rec.vector << 8);
    case PacketKind.trig: return rec.ip | (rec.icntv << 1) | (rec.mult << 2) | (rec.trbv << 3) | (rec.icnt << 11);
    default: return 0;
  }
}

/** Sets the small fields of `rec` from an `a` column value (inverse of packSmall). */
function unpackSmall(kind: number, a: number, rec: PacketRecord): void {
  switch (kind) {
    case PacketKind['tnt.8']: case PacketKind['tnt.64']: rec.n = a; return;
    case PacketKind.tip: case PacketKind['tip.pge']: case PacketKind['tip.pgd']: case PacketKind.fup: rec.ipBytes = a; return;
    case PacketKind.mtc: rec.ctc = a; return;
    case PacketKind.cbr: rec.ratio = a; return;
    case PacketKind.pip: rec.nr = a; return;
    case PacketKind.exstop: case PacketKind.bep: rec.ip = a; return;
    case PacketKind.evd: rec.evdType = a; return;
    case PacketKind['mode.exec']: rec.csl = a & 1; rec.csd = (a >>> 1) & 1; rec.iflag = (a >>> 2) & 1; return;
    case PacketKind['mode.tsx']: rec.intx = a & 1; rec.abrt = (a >>> 1) & 1; return;
    case PacketKind.tma: rec.ctc = a & 0xffff; rec.fc = a >>> 16; return;
    case PacketKind.pwre: rec.state = a & 0xf; rec.subState = (a >>> 4) & 0xf; rec.hw = (a >>> 8) & 1; return;
    case PacketKind.pwrx:
      rec.last = a & 0xf; rec.deepest = (a >>> 4) & 0xf;
      rec.interrupt = (a >>> 8) & 1; rec.store = (a >>> 9) & 1; rec.autonomous = (a >>> 10) & 1;
      return;
    case PacketKind.ptw: rec.plc = a & 3; rec.ip = (a >>> 2) & 1; return;
    case PacketKind.bbp: rec.sz = a & 1; rec.blockType = a >>> 1; return;
    case PacketKind.bip: rec.id = a & 0x1f; rec.sz = (a >>> 5) & 1; return;
    case PacketKind.cfe: rec.ip = a & 1; rec.cfeType = (a >>> 1) & 0x1f; rec.vector = (a >>> 8) & 0xff; return;
    case PacketKind.trig:
      rec.ip = a & 1; rec.icntv = (a >>> 1) & 1; rec.mult = (a >>> 2) & 1; rec.trbv = (a >>> 3) & 0xff; rec.icnt = a >>> 11;
      return;
    default: return;
  }
}
