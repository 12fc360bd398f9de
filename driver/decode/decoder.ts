// The streaming packet decoder: one switch on the first byte (256-entry class
// table), manual little-endian reads into uint32 halves, no bigint and no
// allocation per packet. Header tree: docs/sdm/packets.md §2; error classes:
// libipt 2.0.5 as docs/sdm/packets.md §2 lists them (which check comes first,
// e.g. a reserved IPBytes before the length, follows libipt's pt_pkt_read_*);
// resynchronisation: docs/formats/packet-json.md "Errors and resynchronisation".
// decodeBatch() fills a PacketBatch (batch.ts), the frequent packets through
// the table-driven loop of hot-loop.ts, the rest through this decoder.
//
// Differences with libipt 2.0.5, on purpose (the SDM first): BBP, BEP,
// CFE, EVD and TRIG are decoded (libipt: bad_opc); a `(b & 7) == 4` byte
// between BBP and BEP is a BIP (libipt: TNT-8); PWRE's HW is byte 2 bit 7
// (libipt: bit 3, spec §3.17).
import { storeRecord, type PacketBatch } from './batch.js';
import { mixSlot } from './checksum.js';
import { HOT_CAPACITY, HOT_TAIL, hotColumns, hotCount, hotCounts, hotDecode, hotState } from './hot-loop.js';
import { EXT, EXT2_MNT, IP_PAYLOAD_BYTES, OPC, PSB_HI, PSB_LO, PTPS, tmaReservedClear } from './opcodes.js';
import { DecodeError, PacketKind, PacketRecord } from './record.js';
import { findPsb, RESYNC_LOOKBACK } from './sync.js';

// First-byte classes.
const C_BAD = 0, C_PAD = 1, C_EXT = 2, C_TNT8 = 3, C_CYC = 4, C_IP = 5, C_MODE = 6, C_TSC = 7, C_MTC = 8, C_TRIG = 9;
const CLASS = new Uint8Array(256);
/** Kind of an IP packet by first byte (tip/tip.pge/tip.pgd/fup). */
const IP_KIND = new Uint8Array(256);
for (let b = 0; b < 256; b++) {
  let c = C_BAD;
  if (b === OPC.PAD) c = C_PAD;
  else if (b === OPC.EXT) c = C_EXT;
  else if ((b & 1) === 0) c = C_TNT8;
  else if ((b & 3) === 3) c = C_CYC;
  else if (b === OPC.MODE) c = C_MODE;
  else if (b === OPC.TSC) c = C_TSC;
  else if (b === OPC.MTC) c = C_MTC;
  else if (b === OPC.TRIG) c = C_TRIG;
  else {
    const op = b & 0x1f;
    const k = op === OPC.TIP ? PacketKind.tip : op === OPC.TIP_PGE ? PacketKind['tip.pge']
      : op === OPC.TIP_PGD ? PacketKind['tip.pgd'] : op === OPC.FUP ? PacketKind.fup : 0;
    if (k !== 0) { c = C_IP; IP_KIND[b] = k; }
  }
  CLASS[b] = c;
}

// Second-byte classes of `02 xx`.
const X_BAD = 0, X_PSB = 1, X_PSBEND = 2, X_OVF = 3, X_TNT64 = 4, X_PIP = 5, X_CBR = 6, X_TMA = 7, X_VMCS = 8,
  X_STOP = 9, X_EXT2 = 10, X_EXSTOP = 11, X_MWAIT = 12, X_PWRE = 13, X_PWRX = 14, X_PTW = 15, X_BBP = 16,
  X_BEP = 17, X_CFE = 18, X_EVD = 19;
const XCLASS = new Uint8Array(256);
for (let b = 0; b < 256; b++) if ((b & 0x1f) === EXT.PTW) XCLASS[b] = X_PTW;
XCLASS[EXT.PSB] = X_PSB; XCLASS[EXT.PSBEND] = X_PSBEND; XCLASS[EXT.OVF] = X_OVF; XCLASS[EXT.TNT_64] = X_TNT64;
XCLASS[EXT.PIP] = X_PIP; XCLASS[EXT.CBR] = X_CBR; XCLASS[EXT.TMA] = X_TMA; XCLASS[EXT.VMCS] = X_VMCS;
XCLASS[EXT.STOP] = X_STOP; XCLASS[EXT.EXT2] = X_EXT2; XCLASS[EXT.EXSTOP] = X_EXSTOP; XCLASS[EXT.EXSTOP_IP] = X_EXSTOP;
XCLASS[EXT.MWAIT] = X_MWAIT; XCLASS[EXT.PWRE] = X_PWRE; XCLASS[EXT.PWRX] = X_PWRX; XCLASS[EXT.BBP] = X_BBP;
XCLASS[EXT.BEP] = X_BEP; XCLASS[EXT.BEP_IP] = X_BEP; XCLASS[EXT.CFE] = X_CFE; XCLASS[EXT.EVD] = X_EVD;

/** IP payload bytes by IPBytes; -1 reserved (spec §5): opcodes.ts's table, as a local typed array for the loops. */
const IP_LEN = Int8Array.from(IP_PAYLOAD_BYTES);
/** Masks of the IP payload's low/high 32 bits by IPBytes (spec §5: 0/16/32/48/48/-/64 bits). */
const IP_LO_MASK = new Int32Array([0, 0xffff, -1, -1, -1, 0, -1, 0]);
const IP_HI_MASK = new Int32Array([0, 0, 0, 0xffff, 0xffff, 0, -1, 0]);

// Fast-path classes of the first byte (next()): 0 = general decoder.
const F_TNT8 = 1, F_CYC1 = 2, F_IP = 3, F_PAD = 4;
const FAST = new Uint8Array(256);
FAST[OPC.PAD] = F_PAD;
for (let b = 0; b < 256; b++) {
  if (CLASS[b] === C_TNT8) FAST[b] = F_TNT8;
  else if (CLASS[b] === C_CYC && (b & 4) === 0) FAST[b] = F_CYC1;
  else if (CLASS[b] === C_IP && IP_LEN[b >>> 5]! >= 0) FAST[b] = F_IP;
}

// Decoder states.
// S_BLOCK: synced, inside a BBP…BEP block (no fast path: BIP bytes look like TNT-8).
const S_SEARCH = 0, S_SYNCED = 1, S_DONE = 2, S_BLOCK = 3;
// Internal result of decodeAt(): a packet, an error, or "need more bytes".
const R_OK = 0, R_ERR = 1, R_MORE = 2;

/** Copies the first k slots of hot-loop.ts's scratch region to slots [n, n + k) of `batch`. */
function copyHot(batch: PacketBatch, n: number, k: number): void {
  const c = hotColumns;
  batch.kind.set(c.kind.subarray(0, k), n);
  batch.size.set(c.size.subarray(0, k), n);
  batch.offset.set(c.offset.subarray(0, k), n);
  batch.lo.set(c.lo.subarray(0, k), n);
  batch.hi.set(c.hi.subarray(0, k), n);
  batch.a.set(c.a.subarray(0, k), n);
}

/** Options of a PacketDecoder. */
export interface DecoderOptions {
  /** Absolute offset of buf[0] (record offsets are baseOffset + index). Default 0. */
  baseOffset?: number;
  /** Default true. false: a packet cut by the end of buf is not an error; next() returns false and `consumed` points at it. */
  final?: boolean;
  /** Default false. true: buf[0] is taken as a packet boundary (no PSB search first), e.g. for single packets in tests. */
  synced?: boolean;
  /**
   * Default false. true: PAD packets give no record; a run of them is skipped in one scan (flow:
   * PAD carries nothing, spec §3.1, and a fuzzer's capture is half PAD by packet count).
   */
  skipPad?: boolean;
}

/**
 * Streaming Intel PT packet decoder. Bytes before the first PSB are skipped;
 * after an error it resumes at the next PSB (libipt's rules, sync.ts).
 * Malformed input never throws.
 */
export class PacketDecoder {
  /** The reused record the last next() filled (valid until the following next()). */
  readonly record: PacketRecord = new PacketRecord();
  private buf: Uint8Array;
  /** A little-endian view of buf (spec conventions: payloads are little-endian). */
  private dv: DataView;
  /** Absolute offset of buf[0]. */
  private base: number;
  private final: boolean;
  /** DecoderOptions.skipPad. */
  private readonly skipPad: boolean;
  /** SYNCED: index of the next packet. SEARCH: scan position (when searchFrom < 0). */
  private pos = 0;
  private state = S_SEARCH;
  /** buf.length while synced outside a block (the fast path may run), else 0. */
  private fastEnd = 0;
  /** SEARCH: absolute offset the PSB search must start at, or -1 when `pos` is the scan position. */
  private searchFrom: number;
  private everSynced: boolean;
  /** Absolute offset of the stream start. */
  private readonly origin: number;
  /** 0 outside a PEBS block; 4 or 8: BIP payload bytes inside BBP…BEP (spec §3.18). */
  private block = 0;
  /** Up to RESYNC_LOOKBACK bytes before buf[0] (chunked decoding: the resync search may look back into them). */
  private hist = new Uint8Array(RESYNC_LOOKBACK);
  private histLen = 0;

  constructor(buf: Uint8Array, opts: DecoderOptions = {}) {
    this.buf = buf;
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.base = opts.baseOffset ?? 0;
    this.origin = this.base;
    this.final = opts.final ?? true;
    this.skipPad = opts.skipPad ?? false;
    const synced = opts.synced ?? false;
    this.setState(synced ? S_SYNCED : S_SEARCH);
    this.everSynced = synced;
    this.searchFrom = synced ? -1 : this.base;
  }

  /** Bytes of `buf` fully consumed so far (for chunked reading: resume from here). */
  get consumed(): number {
    if (this.state === S_SEARCH && this.searchFrom >= 0) return Math.max(0, Math.min(this.pos, this.searchFrom + RESYNC_LOOKBACK - this.base));
    if (this.state === S_DONE) return this.buf.length;
    return this.pos;
  }

  /**
   * Continues in `next`, which must start with the unconsumed bytes of the
   * current buffer (`buf.subarray(consumed)`) followed by new data. Keeps the
   * sync state, so chunked decoding gives exactly the one-shot records.
   */
  resume(next: Uint8Array, opts: { final?: boolean } = {}): void {
    const used = this.consumed;
    // Keep the last RESYNC_LOOKBACK bytes before the new start (old history + consumed bytes).
    const keep = Math.min(RESYNC_LOOKBACK, this.histLen + used);
    const h = new Uint8Array(RESYNC_LOOKBACK);
    const fromBuf = Math.min(keep, used);
    const fromHist = keep - fromBuf;
    h.set(this.hist.subarray(this.histLen - fromHist, this.histLen), 0);
    h.set(this.buf.subarray(used - fromBuf, used), fromHist);
    this.hist = h;
    this.histLen = keep;
    this.base += used;
    this.pos = Math.max(0, this.pos - used);
    this.buf = next;
    this.dv = new DataView(next.buffer, next.byteOffset, next.byteLength);
    this.final = opts.final ?? true;
    this.setState(this.state);
  }

  /** Decodes the next packet into `record`. false = no more packets in this buffer. */
  next(): boolean {
    // Fast path for the frequent packets (TNT-8, 1-byte CYC, TIP/FUP/TIP.PGE/
    // TIP.PGD with 8 bytes of data left): one table-driven switch, small
    // enough for V8 to inline into the caller's loop. Everything else (and
    // every error, block or end case) goes through nextSlow(). `fastEnd` is
    // buf.length while synced outside a block, else 0. (record.error is
    // already 0 while synced: only search() leaves an error record, and it
    // always writes the following PSB with error = 0.)
    const i = this.pos;
    if (i < this.fastEnd) {
      const buf = this.buf;
      const b0 = buf[i]!;
      const rec = this.record;
      switch (FAST[b0]) {
        case F_TNT8: {
          // spec §3.2: stop bit = highest set bit of b0 >> 1.
          const v = b0 >>> 1;
          const n = 31 - Math.clz32(v);
          rec.kind = PacketKind['tnt.8']; rec.offset = this.base + i; rec.size = 1;
          rec.n = n; rec.lo = v ^ (1 << n); rec.hi = 0;
          this.pos = i + 1;
          return true;
        }
        case F_CYC1:
          // spec §3.11: one-byte CYC.
          rec.kind = PacketKind.cyc; rec.offset = this.base + i; rec.size = 1; rec.lo = b0 >>> 3; rec.hi = 0;
          this.pos = i + 1;
          return true;
        case F_PAD: {
          // spec §3.1: one zero byte. Skipped as a run, or one record each.
          if (this.skipPad) {
            const end = this.fastEnd;
            let j = i + 1;
            while (j < end && buf[j] === 0) j++;
            this.pos = j;
            return this.next();
          }
          rec.kind = PacketKind.pad; rec.offset = this.base + i; rec.size = 1;
          this.pos = i + 1;
          return true;
        }
        case F_IP:
          // spec §3.3, §5: IPBytes 0,1,2,3,4,6; read 8 bytes and mask (branch-free payload).
          if (i + 9 <= this.fastEnd) {
            const ipb = b0 >>> 5;
            const size = 1 + IP_LEN[ipb]!;
            rec.kind = IP_KIND[b0]!; rec.offset = this.base + i; rec.size = size; rec.ipBytes = ipb;
            const dv = this.dv;
            rec.lo = (dv.getInt32(i + 1, true) & IP_LO_MASK[ipb]!) >>> 0;
            rec.hi = (dv.getInt32(i + 5, true) & IP_HI_MASK[ipb]!) >>> 0;
            this.pos = i + size;
            return true;
          }
          break;
      }
    }
    return this.nextSlow();
  }

  /**
   * Decodes up to `batch.capacity` packets into the batch's columns (batch.ts)
   * and returns how many (also in `batch.count`, errors among them in
   * `batch.errors`); 0 = no more packets in this buffer, as next() returning
   * false. The records, errors and resync are exactly next()'s, and the two
   * may be mixed. `record` is not kept up to date. With `options.checksum` the
   * batch's checksum takes in every stored packet, in the same pass.
   */
  decodeBatch(batch: PacketBatch): number {
    const cap = batch.capacity;
    const sum = batch.checksumming;
    let n = 0;
    let errors = 0;
    while (n < cap) {
      if (this.pos + HOT_TAIL <= this.fastEnd) {
        // Synced outside a block: the frequent packets in hot-loop.ts, in place when the batch's
        // columns are a pool region, else through the scratch region and a copy.
        const region = batch.region;
        const k = region >= 0
          ? hotDecode(this.buf, this.dv, this.pos, this.fastEnd, this.base, region + n, cap - n, sum, batch.hash)
          : hotDecode(this.buf, this.dv, this.pos, this.fastEnd, this.base, 0, Math.min(cap - n, HOT_CAPACITY), sum, batch.hash);
        if (k > 0) {
          if (region < 0) copyHot(batch, n, k);
          n += k;
          this.pos = hotState.pos;
          batch.hash = hotState.hash;
          if (n >= cap) break;
        }
      }
      // The general decoder: the other packets, errors, resync, blocks, the end of the buffer.
      if (!this.next()) break;
      const rec = this.record;
      storeRecord(batch, n, rec);
      if (sum) batch.hash = mixSlot(batch.hash, batch, n);
      if (rec.kind === PacketKind.error) errors++;
      n++;
    }
    batch.count = n;
    batch.errors = errors;
    return n;
  }

  /**
   * Counts every packet the decoder can give from this buffer by kind: adds to
   * `counts[kind]` (PacketKind codes) and calls `onError` with each error
   * record's DecodeError code and offset. The same packets, errors and resync
   * as a loop over next() or decodeBatch(), with nothing stored per packet.
   */
  countPackets(counts: Float64Array, onError: (code: number, offset: number) => void): void {
    if (counts.length < hotCounts.length) throw new RangeError(`countPackets needs ${hotCounts.length} counters, got ${counts.length}`);
    const rec = this.record;
    for (;;) {
      if (this.pos + HOT_TAIL <= this.fastEnd) this.pos = hotCount(this.buf, this.dv, this.pos, this.fastEnd);
      if (!this.next()) break;
      counts[rec.kind]!++;
      if (rec.kind === PacketKind.error) onError(rec.error, rec.offset);
    }
    for (let k = 0; k < hotCounts.length; k++) {
      if (hotCounts[k] === 0) continue;
      counts[k]! += hotCounts[k]!;
      hotCounts[k] = 0;
    }
  }

  /** Moves to state `s`, keeping `fastEnd` in step. */
  private setState(s: number): void {
    this.state = s;
    this.fastEnd = s === S_SYNCED ? this.buf.length : 0;
  }

  /** The less frequent packets: a fast path for CYC (2 bytes), TIP/FUP/TIP.PGE/TIP.PGD and MTC, then the general decoder. */
  private nextSlow(): boolean {
    const i = this.pos;
    const end = this.fastEnd;
    if (i < end) {
      const buf = this.buf;
      const b0 = buf[i]!;
      const rec = this.record;
      if ((b0 & 7) === 7) {
        // CYC of 2 bytes (spec §3.11).
        if (i + 1 < end) {
          const b1 = buf[i + 1]!;
          if ((b1 & 1) === 0) {
            rec.kind = PacketKind.cyc; rec.offset = this.base + i; rec.size = 2; rec.lo = (b0 >>> 3) | ((b1 >>> 1) << 5); rec.hi = 0;
            this.pos = i + 2;
            return true;
          }
        }
      } else if ((b0 & 3) === 1) {
        const kind = IP_KIND[b0]!;
        if (kind !== 0) {
          // TIP/TIP.PGE/TIP.PGD/FUP (spec §3.3, §5); IPBytes 101b/111b go the general way (bad_packet).
          const ipb = b0 >>> 5;
          const len = IP_LEN[ipb]!;
          const next = i + 1 + len;
          if (len >= 0 && next <= end) {
            let lo = 0, hi = 0;
            if (len !== 0) {
              lo = buf[i + 1]! | (buf[i + 2]! << 8);
              if (len > 2) {
                lo = (lo | (buf[i + 3]! << 16) | (buf[i + 4]! << 24)) >>> 0;
                if (len > 4) {
                  hi = buf[i + 5]! | (buf[i + 6]! << 8);
                  if (len > 6) hi = (hi | (buf[i + 7]! << 16) | (buf[i + 8]! << 24)) >>> 0;
                }
              }
            }
            rec.kind = kind; rec.offset = this.base + i; rec.size = 1 + len; rec.ipBytes = ipb; rec.lo = lo; rec.hi = hi;
            this.pos = next;
            return true;
          }
        } else if (b0 === OPC.MTC && i + 2 <= end) {
          rec.kind = PacketKind.mtc; rec.offset = this.base + i; rec.size = 2; rec.ctc = buf[i + 1]!;
          this.pos = i + 2;
          return true;
        }
      }
    }
    if (this.state === S_SYNCED || this.state === S_BLOCK) return this.nextFull();
    if (this.state === S_SEARCH) return this.search();
    return false;
  }

  /** Any packet, errors and the end of the buffer (the general decoder). */
  private nextFull(): boolean {
    const r = this.decodeAt(this.pos);
    if (r === R_OK) {
      this.pos += this.record.size;
      const s = this.block !== 0 ? S_BLOCK : S_SYNCED;
      if (s !== this.state) this.setState(s);
      return true;
    }
    if (r === R_ERR) {
      this.enterResync();
      return true;
    }
    // R_MORE: clean end or a cut packet.
    if (this.pos >= this.buf.length || !this.final) {
      if (this.final) this.setState(S_DONE);
      return false;
    }
    this.setError(this.base + this.pos, DecodeError.eos);
    this.enterResync();
    return true;
  }

  private enterResync(): void {
    const at = this.record.offset;
    this.setState(S_SEARCH);
    this.block = 0;
    this.searchFrom = Math.max(this.origin, at - RESYNC_LOOKBACK);
    this.pos = at - this.base;
  }

  /** The PSB search (initial or after an error); on success decodes the PSB. */
  private search(): boolean {
    let found: number; // absolute offset of the PSB, or -1
    if (this.searchFrom >= 0) {
      const start = this.searchFrom;
      if (start >= this.base) {
        const r = findPsb(this.buf, start - this.base, this.final);
        if (r >= 0) found = this.base + r;
        else { found = -1; this.pos = ~r; this.searchFrom = -1; }
      } else {
        // The search starts inside the history: scan history + buffer together.
        const back = this.base - start;
        const combined = new Uint8Array(back + this.buf.length);
        combined.set(this.hist.subarray(this.histLen - back, this.histLen), 0);
        combined.set(this.buf, back);
        const r = findPsb(combined, 0, this.final);
        if (r >= 0) found = start + r;
        else {
          found = -1;
          const resume = ~r;
          // A run that starts in the history and reaches the end: retry from `start` with more data.
          if (resume >= back) { this.pos = resume - back; this.searchFrom = -1; } else this.pos = 0;
        }
      }
    } else {
      const r = findPsb(this.buf, this.pos, this.final);
      if (r >= 0) found = this.base + r;
      else { found = -1; this.pos = ~r; }
    }
    if (found < 0) {
      if (!this.final) return false;
      this.setState(S_DONE);
      if (this.everSynced) return false;
      // docs/formats/packet-json.md: a stream with no PSB at all gives one eos at offset 0.
      this.everSynced = true;
      this.setError(this.origin, DecodeError.eos);
      return true;
    }
    this.setState(S_SYNCED);
    this.everSynced = true;
    this.searchFrom = -1;
    this.block = 0;
    const rec = this.record;
    rec.kind = PacketKind.psb; rec.offset = found; rec.size = PTPS.PSB; rec.error = 0;
    this.pos = found + PTPS.PSB - this.base;
    return true;
  }

  private setError(index: number, code: number): void {
    const rec = this.record;
    rec.kind = PacketKind.error;
    rec.offset = index;
    rec.size = 0;
    rec.error = code;
  }

  private fail(i: number, code: number): number {
    this.setError(this.base + i, code);
    return R_ERR;
  }

  /** Decodes the packet at index i into the record. */
  private decodeAt(i: number): number {
    const buf = this.buf;
    const end = buf.length;
    if (i >= end) return R_MORE;
    const rec = this.record;
    const b0 = buf[i]!;
    if (this.block !== 0 && (b0 & 7) === OPC.BIP) return this.decodeBip(i, b0);
    switch (CLASS[b0]) {
      case C_TNT8: {
        // spec §3.2: stop bit = highest set bit; the n bits below it are the results.
        const v = b0 >>> 1;
        const n = 31 - Math.clz32(v);
        rec.kind = PacketKind['tnt.8']; rec.offset = this.base + i; rec.size = 1; rec.error = 0;
        rec.n = n; rec.lo = v & ((1 << n) - 1); rec.hi = 0;
        this.block = 0;
        return R_OK;
      }
      case C_IP: {
        const ipb = b0 >>> 5;
        const len = IP_LEN[ipb]!;
        if (len < 0) return this.fail(i, DecodeError.bad_packet); // IPBytes 101b/111b (spec §5)
        if (i + 1 + len > end) return R_MORE;
        let lo = 0, hi = 0;
        if (len >= 2) {
          lo = buf[i + 1]! | (buf[i + 2]! << 8);
          if (len >= 4) {
            lo = (lo | (buf[i + 3]! << 16) | (buf[i + 4]! << 24)) >>> 0;
            if (len >= 6) {
              hi = buf[i + 5]! | (buf[i + 6]! << 8);
              if (len === 8) hi = (hi | (buf[i + 7]! << 16) | (buf[i + 8]! << 24)) >>> 0;
            }
          }
        }
        rec.kind = IP_KIND[b0]!; rec.offset = this.base + i; rec.size = 1 + len; rec.error = 0;
        rec.ipBytes = ipb; rec.lo = lo; rec.hi = hi;
        if (rec.kind !== PacketKind.fup) this.block = 0;
        return R_OK;
      }
      case C_CYC: return this.decodeCyc(i, b0);
      case C_PAD:
        rec.kind = PacketKind.pad; rec.offset = this.base + i; rec.size = 1; rec.error = 0;
        return R_OK;
      case C_MTC:
        if (i + 2 > end) return R_MORE;
        rec.kind = PacketKind.mtc; rec.offset = this.base + i; rec.size = 2; rec.error = 0;
        rec.ctc = buf[i + 1]!;
        return R_OK;
      case C_TSC:
        if (i + 8 > end) return R_MORE;
        rec.kind = PacketKind.tsc; rec.offset = this.base + i; rec.size = 8; rec.error = 0;
        rec.lo = (buf[i + 1]! | (buf[i + 2]! << 8) | (buf[i + 3]! << 16) | (buf[i + 4]! << 24)) >>> 0;
        rec.hi = buf[i + 5]! | (buf[i + 6]! << 8) | (buf[i + 7]! << 16);
        return R_OK;
      case C_MODE: {
        if (i + 2 > end) return R_MORE;
        const b1 = buf[i + 1]!;
        const leaf = b1 >>> 5;
        if (leaf === 0) {
          rec.kind = PacketKind['mode.exec'];
          rec.csl = b1 & 1; rec.csd = (b1 >>> 1) & 1; rec.iflag = (b1 >>> 2) & 1;
        } else if (leaf === 1) {
          rec.kind = PacketKind['mode.tsx'];
          rec.intx = b1 & 1; rec.abrt = (b1 >>> 1) & 1;
        } else {
          return this.fail(i, DecodeError.bad_packet); // MODE leaf other than 000b/001b (spec §3.5)
        }
        rec.offset = this.base + i; rec.size = 2; rec.error = 0;
        this.block = 0;
        return R_OK;
      }
      case C_EXT: return this.decodeExt(i);
      case C_TRIG: {
        // spec §3.20: D9, flags, TRBV, [ICNT].
        if (i + 2 > end) return R_MORE;
        const f = buf[i + 1]!;
        const size = (f & 0x40) !== 0 ? PTPS.TRIG_ICNT : PTPS.TRIG;
        if (i + size > end) return R_MORE;
        rec.kind = PacketKind.trig; rec.offset = this.base + i; rec.size = size; rec.error = 0;
        rec.ip = f >>> 7; rec.icntv = (f >>> 6) & 1; rec.mult = (f >>> 5) & 1; rec.trbv = buf[i + 2]!;
        rec.icnt = size === PTPS.TRIG_ICNT ? buf[i + 3]! | (buf[i + 4]! << 8) : 0;
        return R_OK;
      }
      default:
        return this.fail(i, DecodeError.bad_opc);
    }
  }

  /** CYC (spec §3.11): at most 9 bytes, a 10th byte is bad_packet (libipt pt_pkt_read_cyc). */
  private decodeCyc(i: number, b0: number): number {
    const buf = this.buf;
    const end = buf.length;
    let lo = b0 >>> 3;
    let hi = 0;
    let shl = 5;
    let j = i + 1;
    let ext = b0 & 4;
    while (ext !== 0) {
      if (j >= end) return R_MORE;
      const x = buf[j++]!;
      ext = x & 1;
      if (j - i > PTPS.CYC_MAX) return this.fail(i, DecodeError.bad_packet);
      const bits = x >>> 1;
      // Place 7 bits at bit `shl` of the 64-bit value.
      if (shl < 32) {
        lo = (lo | (bits << shl)) >>> 0;
        if (shl > 25) hi |= bits >>> (32 - shl);
      } else {
        hi |= bits << (shl - 32);
      }
      shl += 7;
    }
    const rec = this.record;
    rec.kind = PacketKind.cyc; rec.offset = this.base + i; rec.size = j - i; rec.error = 0;
    rec.lo = lo; rec.hi = hi >>> 0;
    return R_OK;
  }

  /** BIP inside a BBP…BEP block (spec §3.18). */
  private decodeBip(i: number, b0: number): number {
    const buf = this.buf;
    const n = this.block;
    if (i + 1 + n > buf.length) return R_MORE;
    const rec = this.record;
    rec.kind = PacketKind.bip; rec.offset = this.base + i; rec.size = 1 + n; rec.error = 0;
    rec.id = b0 >>> 3; rec.sz = n === 4 ? 1 : 0;
    rec.lo = (buf[i + 1]! | (buf[i + 2]! << 8) | (buf[i + 3]! << 16) | (buf[i + 4]! << 24)) >>> 0;
    rec.hi = n === 8 ? (buf[i + 5]! | (buf[i + 6]! << 8) | (buf[i + 7]! << 16) | (buf[i + 8]! << 24)) >>> 0 : 0;
    return R_OK;
  }

  /** Extended `02 xx` packets (spec §2 tree). */
  private decodeExt(i: number): number {
    const buf = this.buf;
    const end = buf.length;
    if (i + 2 > end) return R_MORE;
    const rec = this.record;
    const b1 = buf[i + 1]!;
    const off = this.base + i;
    switch (XCLASS[b1]) {
      case X_PSB: {
        if (i + PTPS.PSB > end) return R_MORE;
        for (let k = 2; k < PTPS.PSB; k += 2) {
          if (buf[i + k] !== PSB_HI || buf[i + k + 1] !== PSB_LO) return this.fail(i, DecodeError.bad_packet);
        }
        rec.kind = PacketKind.psb; rec.offset = off; rec.size = PTPS.PSB; rec.error = 0;
        this.block = 0;
        return R_OK;
      }
      case X_PSBEND:
        rec.kind = PacketKind.psbend; rec.offset = off; rec.size = 2; rec.error = 0;
        this.block = 0;
        return R_OK;
      case X_OVF:
        rec.kind = PacketKind.ovf; rec.offset = off; rec.size = 2; rec.error = 0;
        this.block = 0;
        return R_OK;
      case X_STOP:
        rec.kind = PacketKind.stop; rec.offset = off; rec.size = 2; rec.error = 0;
        this.block = 0;
        return R_OK;
      case X_TNT64: {
        if (i + PTPS.TNT_64 > end) return R_MORE;
        const lo = (buf[i + 2]! | (buf[i + 3]! << 8) | (buf[i + 4]! << 16) | (buf[i + 5]! << 24)) >>> 0;
        const hi = buf[i + 6]! | (buf[i + 7]! << 8);
        // spec §3.2: stop bit = highest set bit of the 48-bit payload; payload 0 or 1 is malformed.
        let n: number;
        if (hi !== 0) n = 32 + 31 - Math.clz32(hi);
        else if (lo > 1) n = 31 - Math.clz32(lo);
        else return this.fail(i, DecodeError.bad_packet);
        rec.kind = PacketKind['tnt.64']; rec.offset = off; rec.size = PTPS.TNT_64; rec.error = 0;
        rec.n = n;
        if (n >= 32) { rec.lo = lo; rec.hi = hi & ((1 << (n - 32)) - 1); } else { rec.lo = (lo & ((1 << n) - 1)) >>> 0; rec.hi = 0; }
        this.block = 0;
        return R_OK;
      }
      case X_PIP: {
        if (i + PTPS.PIP > end) return R_MORE;
        // spec §3.4: payload48 = CR3[51:5] << 1 | NR; cr3 = (payload >> 1) << 5 = payload << 4 with bits 4:0 cleared.
        const lo = (buf[i + 2]! | (buf[i + 3]! << 8) | (buf[i + 4]! << 16) | (buf[i + 5]! << 24)) >>> 0;
        const hi = buf[i + 6]! | (buf[i + 7]! << 8);
        rec.kind = PacketKind.pip; rec.offset = off; rec.size = PTPS.PIP; rec.error = 0;
        rec.nr = lo & 1;
        rec.lo = ((lo & ~1) << 4) >>> 0;
        rec.hi = (hi << 4) | (lo >>> 28);
        this.block = 0;
        return R_OK;
      }
      case X_VMCS: {
        if (i + PTPS.VMCS > end) return R_MORE;
        // spec §3.12: pointer = payload40 << 12.
        const lo = (buf[i + 2]! | (buf[i + 3]! << 8) | (buf[i + 4]! << 16) | (buf[i + 5]! << 24)) >>> 0;
        const hi = buf[i + 6]!;
        rec.kind = PacketKind.vmcs; rec.offset = off; rec.size = PTPS.VMCS; rec.error = 0;
        rec.lo = (lo << 12) >>> 0;
        rec.hi = (hi << 12) | (lo >>> 20);
        this.block = 0;
        return R_OK;
      }
      case X_CBR:
        if (i + PTPS.CBR > end) return R_MORE;
        rec.kind = PacketKind.cbr; rec.offset = off; rec.size = PTPS.CBR; rec.error = 0;
        rec.ratio = buf[i + 2]!;
        return R_OK;
      case X_TMA: {
        if (i + PTPS.TMA > end) return R_MORE;
        if (!tmaReservedClear(buf[i + 4]!, buf[i + 6]!)) return this.fail(i, DecodeError.bad_packet);
        rec.kind = PacketKind.tma; rec.offset = off; rec.size = PTPS.TMA; rec.error = 0;
        rec.ctc = buf[i + 2]! | (buf[i + 3]! << 8);
        rec.fc = buf[i + 5]! | ((buf[i + 6]! & 1) << 8);
        return R_OK;
      }
      case X_EXT2:
        if (i + 3 > end) return R_MORE;
        if (buf[i + 2] !== EXT2_MNT) return this.fail(i, DecodeError.bad_opc); // `02 C3 xx≠88` (spec §2)
        if (i + PTPS.MNT > end) return R_MORE;
        rec.kind = PacketKind.mnt; rec.offset = off; rec.size = PTPS.MNT; rec.error = 0;
        rec.lo = (buf[i + 3]! | (buf[i + 4]! << 8) | (buf[i + 5]! << 16) | (buf[i + 6]! << 24)) >>> 0;
        rec.hi = (buf[i + 7]! | (buf[i + 8]! << 8) | (buf[i + 9]! << 16) | (buf[i + 10]! << 24)) >>> 0;
        return R_OK;
      case X_EXSTOP:
        rec.kind = PacketKind.exstop; rec.offset = off; rec.size = 2; rec.error = 0;
        rec.ip = b1 >>> 7;
        return R_OK;
      case X_MWAIT:
        if (i + PTPS.MWAIT > end) return R_MORE;
        // spec §3.17: libipt reads bytes 2–5 and 6–9 as two 32-bit values.
        rec.kind = PacketKind.mwait; rec.offset = off; rec.size = PTPS.MWAIT; rec.error = 0;
        rec.lo = (buf[i + 2]! | (buf[i + 3]! << 8) | (buf[i + 4]! << 16) | (buf[i + 5]! << 24)) >>> 0;
        rec.hi = (buf[i + 6]! | (buf[i + 7]! << 8) | (buf[i + 8]! << 16) | (buf[i + 9]! << 24)) >>> 0;
        this.block = 0;
        return R_OK;
      case X_PWRE: {
        if (i + PTPS.PWRE > end) return R_MORE;
        const b3 = buf[i + 3]!;
        rec.kind = PacketKind.pwre; rec.offset = off; rec.size = PTPS.PWRE; rec.error = 0;
        rec.hw = buf[i + 2]! >>> 7; rec.state = b3 >>> 4; rec.subState = b3 & 0xf;
        return R_OK;
      }
      case X_PWRX: {
        if (i + PTPS.PWRX > end) return R_MORE;
        const b2 = buf[i + 2]!, b3 = buf[i + 3]!;
        rec.kind = PacketKind.pwrx; rec.offset = off; rec.size = PTPS.PWRX; rec.error = 0;
        rec.last = b2 >>> 4; rec.deepest = b2 & 0xf;
        rec.interrupt = b3 & 1; rec.store = (b3 >>> 2) & 1; rec.autonomous = (b3 >>> 3) & 1;
        return R_OK;
      }
      case X_PTW: {
        // spec §3.16: PayloadBytes 10b/11b reserved (checked before the length, like libipt).
        const plc = (b1 >>> 5) & 3;
        if (plc > 1) return this.fail(i, DecodeError.bad_packet);
        const size = plc === 0 ? PTPS.PTW_32 : PTPS.PTW_64;
        if (i + size > end) return R_MORE;
        rec.kind = PacketKind.ptw; rec.offset = off; rec.size = size; rec.error = 0;
        rec.plc = plc; rec.ip = b1 >>> 7;
        rec.lo = (buf[i + 2]! | (buf[i + 3]! << 8) | (buf[i + 4]! << 16) | (buf[i + 5]! << 24)) >>> 0;
        rec.hi = plc === 1 ? (buf[i + 6]! | (buf[i + 7]! << 8) | (buf[i + 8]! << 16) | (buf[i + 9]! << 24)) >>> 0 : 0;
        this.block = 0;
        return R_OK;
      }
      case X_BBP: {
        if (i + PTPS.BBP > end) return R_MORE;
        const b2 = buf[i + 2]!;
        rec.kind = PacketKind.bbp; rec.offset = off; rec.size = PTPS.BBP; rec.error = 0;
        rec.sz = b2 >>> 7; rec.blockType = b2 & 0x1f;
        this.block = rec.sz === 1 ? 4 : 8;
        return R_OK;
      }
      case X_BEP:
        rec.kind = PacketKind.bep; rec.offset = off; rec.size = PTPS.BEP; rec.error = 0;
        rec.ip = b1 >>> 7;
        this.block = 0;
        return R_OK;
      case X_CFE: {
        if (i + PTPS.CFE > end) return R_MORE;
        const b2 = buf[i + 2]!;
        rec.kind = PacketKind.cfe; rec.offset = off; rec.size = PTPS.CFE; rec.error = 0;
        rec.ip = b2 >>> 7; rec.cfeType = b2 & 0x1f; rec.vector = buf[i + 3]!;
        return R_OK;
      }
      case X_EVD:
        if (i + PTPS.EVD > end) return R_MORE;
        rec.kind = PacketKind.evd; rec.offset = off; rec.size = PTPS.EVD; rec.error = 0;
        rec.evdType = buf[i + 2]! & 0x1f;
        rec.lo = (buf[i + 3]! | (buf[i + 4]! << 8) | (buf[i + 5]! << 16) | (buf[i + 6]! << 24)) >>> 0;
        rec.hi = (buf[i + 7]! | (buf[i + 8]! << 8) | (buf[i + 9]! << 16) | (buf[i + 10]! << 24)) >>> 0;
        return R_OK;
      default:
        return this.fail(i, DecodeError.bad_opc);
    }
  }
}
