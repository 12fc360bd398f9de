// decodeBatch()'s fast path (decoder.ts): the frequent packets decoded in one
// tight loop, straight into PacketBatch columns that are views of the pool
// below (or into its scratch region, which the decoder copies out).
//
// Why a module-level pool: V8 (Node 20) embeds a module `const` typed array in
// optimized code, but re-checks the map, length and data pointer of any other
// typed array on every access of such a loop. Measured on the 64 MiB bench
// stream (decode + checksum, CPU time): 0.55 s writing the caller's own
// columns, 0.38 s writing the scratch region and copying, 0.33 s in place.
// The same holds for imported bindings (re-read and hole-checked on every
// use): the loop uses module-local constants only.
//
// Hot packets (no branch on the packet type): TNT-8, CYC of 1–2 bytes, PAD, MTC,
// TSC and TIP/TIP.PGE/TIP.PGD/FUP with a defined IPBytes. Their size and every
// field follow from byte 0 and the payload words w0 = bytes 1–4, w1 = bytes
// 5–8 (little-endian) through the first-byte tables below:
//
//   kind = HOT_KIND[b0] (0: not hot), hot only if (w0 & HOT_CHECK[b0]) === 0,
//   size = HOT_SIZE[b0],
//   a  = HOT_A[b0]  | (w0 & HOT_A_MASK[b0]),
//   lo = HOT_LO[b0] | (w0 & HOT_LO_MASK[b0]) * HOT_LO_MUL[b0],
//   hi = w1 & HOT_HI_MASK[b0],
//
// in the PacketBatch layout (batch.ts). The checksum (checksum.ts) mixes kind,
// size, then a, lo, hi with the multipliers HOT_MUL_A[b0] and HOT_MUL_LH[b0]:
// the FNV prime where the kind has that field, 1 where it has not (mixing
// word 0 with multiplier 1 leaves the hash unchanged).
//
// Warm packets (one branch each): CYC of 3 bytes, MODE, PSB, PSBEND, OVF,
// STOP, CBR, TMA, PIP, TNT-64, with the validity checks of decoder.ts
// decodeAt(). The loop stops at anything else, and at anything invalid, and
// leaves it to the general decoder: errors and resync are decodeAt()'s alone.
import { EXT, IP_PAYLOAD_BYTES, OPC, PSB_HI, PSB_LO, PTPS, tmaReservedClear } from './opcodes.js';
import { PacketKind } from './record.js';

/** The FNV-1a prime of checksum.ts. */
const P = 0x01000193;

/** Bytes the loop needs from a packet's start: byte 0 and the payload words w0, w1. */
export const HOT_TAIL = 9;

/** Packets per pool region: the most one hotDecode() call stores into the scratch region. */
export const HOT_CAPACITY = 4096;

/** Pool regions a PacketBatch can own (region 0 is the scratch region of the other batches). */
const POOL_REGIONS = 8;

/**
 * The columns hotDecode() writes (PacketBatch layout, batch.ts): region 0
 * (slots [0, HOT_CAPACITY)) is scratch, copied out by the decoder; regions
 * 1…POOL_REGIONS are owned by PacketBatches whose columns are views of them
 * (takeRegion), so hotDecode() writes their packets in place.
 */
export const hotColumns = {
  kind: new Uint8Array((POOL_REGIONS + 1) * HOT_CAPACITY),
  size: new Uint8Array((POOL_REGIONS + 1) * HOT_CAPACITY),
  offset: new Float64Array((POOL_REGIONS + 1) * HOT_CAPACITY),
  lo: new Int32Array((POOL_REGIONS + 1) * HOT_CAPACITY),
  hi: new Int32Array((POOL_REGIONS + 1) * HOT_CAPACITY),
  a: new Int32Array((POOL_REGIONS + 1) * HOT_CAPACITY),
} as const;

let regionsTaken = 0;

/** The first slot of a pool region for a new PacketBatch of up to HOT_CAPACITY packets, or -1 when all are taken (regions are never given back). */
export function takeRegion(): number {
  if (regionsTaken >= POOL_REGIONS) return -1;
  regionsTaken++;
  return regionsTaken * HOT_CAPACITY;
}

/** hotDecode()'s other results: the index it stopped at and the running checksum (int32 bits). */
export const hotState = { pos: 0, hash: 0 };

const K_KIND = hotColumns.kind, K_SIZE = hotColumns.size, K_OFF = hotColumns.offset;
const K_LO = hotColumns.lo, K_HI = hotColumns.hi, K_A = hotColumns.a;

const HOT_KIND = new Uint8Array(256);
const HOT_SIZE = new Uint8Array(256);
const HOT_A = new Int32Array(256);
const HOT_A_MASK = new Int32Array(256);
const HOT_LO = new Int32Array(256);
const HOT_LO_MASK = new Int32Array(256);
const HOT_LO_MUL = new Int32Array(256).fill(1);
const HOT_HI_MASK = new Int32Array(256);
const HOT_CHECK = new Int32Array(256);
const HOT_MUL_A = new Int32Array(256).fill(1);
const HOT_MUL_LH = new Int32Array(256).fill(1);

/** IP packet kind by opcode bits 4:0 (docs/sdm/packets.md §3.3). */
const IP_KINDS: ReadonlyMap<number, number> = new Map([
  [OPC.TIP, PacketKind.tip], [OPC.TIP_PGE, PacketKind['tip.pge']], [OPC.TIP_PGD, PacketKind['tip.pgd']], [OPC.FUP, PacketKind.fup],
]);
/** Masks of the IP payload's low/high 32 bits by IPBytes (spec §5: 0/16/32/48/48/-/64 bits). */
const IP_LO_MASK = [0, 0xffff, -1, -1, -1, 0, -1, 0];
const IP_HI_MASK = [0, 0, 0, 0xffff, 0xffff, 0, -1, 0];

for (let b = 0; b < 256; b++) {
  if (b === OPC.PAD) {
    hot(b, PacketKind.pad, 1);
  } else if (b === OPC.EXT) {
    // `02 xx`: warm.
  } else if ((b & 1) === 0) {
    // TNT-8 (spec §3.2): stop bit = highest set bit of b >> 1, the n bits below it are the results.
    const v = b >>> 1;
    const n = 31 - Math.clz32(v);
    hot(b, PacketKind['tnt.8'], 1);
    HOT_A[b] = n;
    HOT_LO[b] = v ^ (1 << n);
    HOT_MUL_A[b] = P;
    HOT_MUL_LH[b] = P;
  } else if ((b & 3) === 3) {
    // CYC (spec §3.11): one byte when the Exp bit (bit 2) is clear; two when byte 1's Exp bit (bit 0) is
    // clear (HOT_CHECK), byte 1 bits 7:1 giving value bits 11:5 ((b1 & 0xfe) * 16).
    hot(b, PacketKind.cyc, (b & 4) === 0 ? 1 : 2);
    HOT_LO[b] = b >>> 3;
    HOT_MUL_LH[b] = P;
    if ((b & 4) !== 0) {
      HOT_LO_MASK[b] = 0xfe;
      HOT_LO_MUL[b] = 16;
      HOT_CHECK[b] = 1;
    }
  } else if (b === OPC.MTC) {
    // MTC (spec §3.9): CTC = byte 1.
    hot(b, PacketKind.mtc, PTPS.MTC);
    HOT_A_MASK[b] = 0xff;
    HOT_MUL_A[b] = P;
  } else if (b === OPC.TSC) {
    // TSC (spec §3.8): bytes 1–7, TSC[55:0].
    hot(b, PacketKind.tsc, PTPS.TSC);
    HOT_LO_MASK[b] = -1;
    HOT_HI_MASK[b] = 0xffffff;
    HOT_MUL_LH[b] = P;
  } else {
    // TIP/TIP.PGE/TIP.PGD/FUP (spec §3.3, §5): IPBytes = bits 7:5; 101b/111b are reserved (bad_packet: not hot).
    const kind = IP_KINDS.get(b & 0x1f);
    const ipb = b >>> 5;
    const len = IP_PAYLOAD_BYTES[ipb]!;
    if (kind !== undefined && len >= 0) {
      hot(b, kind, 1 + len);
      HOT_A[b] = ipb;
      HOT_LO_MASK[b] = IP_LO_MASK[ipb]!;
      HOT_HI_MASK[b] = IP_HI_MASK[ipb]!;
      HOT_MUL_A[b] = P;
      // checksum.ts: a suppressed IP (IPBytes 0) mixes only IPBytes.
      HOT_MUL_LH[b] = ipb === 0 ? 1 : P;
    }
  }
}

function hot(b: number, kind: number, size: number): void {
  HOT_KIND[b] = kind;
  HOT_SIZE[b] = size;
}

// Kind codes, opcodes and sizes as module constants (see above: no imported binding in the loop).
const CYC = PacketKind.cyc, MODE_EXEC = PacketKind['mode.exec'], MODE_TSX = PacketKind['mode.tsx'];
const PSBEND = PacketKind.psbend, OVF = PacketKind.ovf, STOP = PacketKind.stop, CBR = PacketKind.cbr;
const PAD = PacketKind.pad, TMA = PacketKind.tma, PIP = PacketKind.pip, TNT_64 = PacketKind['tnt.64'], PSB = PacketKind.psb;
const EXT_CBR = EXT.CBR, EXT_OVF = EXT.OVF, EXT_PIP = EXT.PIP, EXT_PSB = EXT.PSB, EXT_PSBEND = EXT.PSBEND;
const EXT_STOP = EXT.STOP, EXT_TMA = EXT.TMA, EXT_TNT_64 = EXT.TNT_64, OPC_EXT = OPC.EXT, OPC_MODE = OPC.MODE;
const PSB_HI_ = PSB_HI, PSB_LO_ = PSB_LO, PTPS_CBR = PTPS.CBR, PTPS_MODE = PTPS.MODE, PTPS_OVF = PTPS.OVF;
const PTPS_PIP = PTPS.PIP, PTPS_PSB = PTPS.PSB, PTPS_PSBEND = PTPS.PSBEND, PTPS_STOP = PTPS.STOP;
/** The TMA rule, bound locally (imported bindings are re-checked on every use: see the top). */
const TMA_RESERVED_CLEAR = tmaReservedClear;
const PTPS_TMA = PTPS.TMA, PTPS_TNT_64 = PTPS.TNT_64;

/** One FNV-1a step on int32 bits (checksum.ts mix without `>>> 0`). */
function mix(h: number, w: number): number {
  return Math.imul(h ^ w, P);
}

// warm()'s results besides kind and size (module variables: no object per packet).
let warmA = 0;
let warmLo = 0;
let warmHi = 0;

/**
 * Decodes hot and warm packets of `buf` from index `pos` into slots `out`,
 * `out + 1`, … of `hotColumns`, at most `max` (within one region), while a
 * packet starts at least HOT_TAIL bytes before `end`. The caller guarantees a
 * packet boundary at `pos`, synced outside a BBP…BEP block (where a BIP
 * would look like TNT-8). `base` is the absolute offset of buf[0]. With
 * `sum`, mixes every stored packet into `hash` (int32 bits). Returns the
 * count; `hotState` holds the index of the first packet not stored and the hash.
 */
export function hotDecode(
  buf: Uint8Array, dv: DataView, pos: number, end: number, base: number, out: number, max: number, sum: boolean, hash: number,
): number {
  const last = end - HOT_TAIL;
  let h = hash;
  let i = pos;
  let n = out;
  const stop = out + max;
  while (n < stop && i <= last) {
    const b0 = buf[i]!;
    const kind = HOT_KIND[b0]!;
    // Payload bytes 1–4 and 5–8 (spec conventions: little-endian), masked per first byte.
    const w0 = dv.getInt32(i + 1, true);
    if (kind !== 0 && (w0 & HOT_CHECK[b0]!) === 0) {
      const w1 = dv.getInt32(i + 5, true);
      const size = HOT_SIZE[b0]!;
      const a = HOT_A[b0]! | (w0 & HOT_A_MASK[b0]!);
      const lo = HOT_LO[b0]! | Math.imul(w0 & HOT_LO_MASK[b0]!, HOT_LO_MUL[b0]!);
      const hi = w1 & HOT_HI_MASK[b0]!;
      K_KIND[n] = kind; K_SIZE[n] = size; K_OFF[n] = base + i; K_A[n] = a; K_LO[n] = lo; K_HI[n] = hi;
      if (sum) {
        const mlh = HOT_MUL_LH[b0]!;
        h = Math.imul(Math.imul(Math.imul(Math.imul(Math.imul(h ^ kind, P) ^ size, P) ^ a, HOT_MUL_A[b0]!) ^ lo, mlh) ^ hi, mlh);
      }
      i += size;
      n++;
      continue;
    }
    const ks = warm(buf, dv, i, end);
    if (ks === 0) break;
    const wkind = ks & 0xff;
    const wsize = ks >>> 8;
    const a = warmA, lo = warmLo, hi = warmHi;
    K_KIND[n] = wkind; K_SIZE[n] = wsize; K_OFF[n] = base + i; K_A[n] = a; K_LO[n] = lo; K_HI[n] = hi;
    if (sum) h = mixWarm(Math.imul(Math.imul(h ^ wkind, P) ^ wsize, P), wkind, a, lo, hi);
    i += wsize;
    n++;
  }
  hotState.pos = i;
  hotState.hash = h;
  return n - out;
}

/** Packets counted by kind (PacketKind codes) by hotCount(); its caller adds and clears them. */
export const hotCounts = new Float64Array(64);
const K_COUNTS = hotCounts;

/**
 * hotDecode() for a caller that needs kinds only (`ptlab dump --stats`): counts
 * the hot and warm packets of `buf` from index `pos` into `hotCounts`, with the
 * same validity checks and the same stopping points, and stores nothing else.
 * Returns the index of the first packet not counted. (HOT_CHECK only tests
 * bits of byte 1, so byte 1 stands in for w0.)
 */
export function hotCount(buf: Uint8Array, dv: DataView, pos: number, end: number): number {
  const last = end - HOT_TAIL;
  let i = pos;
  while (i <= last) {
    const b0 = buf[i]!;
    if (b0 === 0) {
      // A run of PAD (one zero byte each, spec §3.1): a scan for the next non-zero byte, four at a time where it can.
      let j = i + 1;
      while (j + 4 <= last && dv.getUint32(j) === 0) j += 4;
      while (j <= last && buf[j] === 0) j++;
      K_COUNTS[PAD]! += j - i;
      i = j;
      continue;
    }
    const kind = HOT_KIND[b0]!;
    if (kind !== 0 && (buf[i + 1]! & HOT_CHECK[b0]!) === 0) {
      K_COUNTS[kind]!++;
      i += HOT_SIZE[b0]!;
      continue;
    }
    const ks = warm(buf, dv, i, end);
    if (ks === 0) break;
    K_COUNTS[ks & 0xff]!++;
    i += ks >>> 8;
  }
  return i;
}

/** Sets the warm result fields and returns `kind | size << 8`. */
function got(kind: number, size: number, a: number, lo: number, hi: number): number {
  warmA = a; warmLo = lo; warmHi = hi;
  return kind | (size << 8);
}

/** Decodes the warm packet at i (i ≤ end - HOT_TAIL): `kind | size << 8` and warmA/Lo/Hi, or 0 when it is not warm or not valid. */
function warm(buf: Uint8Array, dv: DataView, i: number, end: number): number {
  const b0 = buf[i]!;
  const b1 = buf[i + 1]!;
  if ((b0 & 7) === 7) {
    // CYC (spec §3.11) of 3 bytes (1–2 bytes are hot): 5 bits from byte 0, 7 from each further byte while Exp (bit 0) is set.
    const b2 = buf[i + 2]!;
    if ((b1 & 1) === 0 || (b2 & 1) !== 0) return 0;
    return got(CYC, 3, 0, (b0 >>> 3) | ((b1 >>> 1) << 5) | ((b2 >>> 1) << 12), 0);
  }
  if (b0 === OPC_MODE) {
    // MODE (spec §3.5): leaf = byte 1 bits 7:5; Exec: CS.L, CS.D, IF in bits 2:0; TSX: InTX, TXAbort in bits 1:0.
    const leaf = b1 >>> 5;
    if (leaf === 0) return got(MODE_EXEC, PTPS_MODE, b1 & 7, 0, 0);
    if (leaf === 1) return got(MODE_TSX, PTPS_MODE, b1 & 3, 0, 0);
    return 0;
  }
  if (b0 !== OPC_EXT) return 0;
  switch (b1) {
    case EXT_PSBEND: return got(PSBEND, PTPS_PSBEND, 0, 0, 0);
    case EXT_OVF: return got(OVF, PTPS_OVF, 0, 0, 0);
    case EXT_STOP: return got(STOP, PTPS_STOP, 0, 0, 0);
    case EXT_CBR:
      // CBR (spec §3.7): ratio = byte 2.
      return got(CBR, PTPS_CBR, buf[i + 2]!, 0, 0);
    case EXT_TMA: {
      // TMA (spec §3.10): CTC = bytes 2–3, FastCounter = byte 5 | byte 6 bit 0 << 8; reserved bits set: the general decoder's bad_packet.
      const b6 = buf[i + 6]!;
      if (!TMA_RESERVED_CLEAR(buf[i + 4]!, b6)) return 0;
      const ctc = buf[i + 2]! | (buf[i + 3]! << 8);
      return got(TMA, PTPS_TMA, ctc | ((buf[i + 5]! | ((b6 & 1) << 8)) << 16), 0, 0);
    }
    case EXT_PIP: {
      // PIP (spec §3.4): payload48 = CR3[51:5] << 1 | NR; cr3 = payload << 4 with bits 4:0 clear.
      const lo = dv.getInt32(i + 2, true);
      const hi = buf[i + 6]! | (buf[i + 7]! << 8);
      return got(PIP, PTPS_PIP, lo & 1, (lo & ~1) << 4, (hi << 4) | (lo >>> 28));
    }
    case EXT_TNT_64: {
      // TNT-64 (spec §3.2): stop bit = highest set bit of the 48-bit payload; payload 0 or 1 is malformed.
      const lo = dv.getInt32(i + 2, true);
      const hi = buf[i + 6]! | (buf[i + 7]! << 8);
      if (hi !== 0) {
        const top = 31 - Math.clz32(hi);
        return got(TNT_64, PTPS_TNT_64, 32 + top, lo, hi ^ (1 << top));
      }
      if ((lo >>> 0) <= 1) return 0;
      const top = 31 - Math.clz32(lo);
      return got(TNT_64, PTPS_TNT_64, top, lo ^ (1 << top), 0);
    }
    case EXT_PSB: {
      // PSB (spec §3.14): `02 82` x 8, checked in full.
      if (i + PTPS_PSB > end) return 0;
      for (let k = 2; k < PTPS_PSB; k += 2) if (buf[i + k] !== PSB_HI_ || buf[i + k + 1] !== PSB_LO_) return 0;
      return got(PSB, PTPS_PSB, 0, 0, 0);
    }
    default:
      return 0;
  }
}

/** Mixes a warm packet's fields after kind and size (checksum.ts field order for these kinds). */
function mixWarm(h: number, kind: number, a: number, lo: number, hi: number): number {
  switch (kind) {
    case CYC: return mix(mix(h, lo), hi);
    case MODE_EXEC: case MODE_TSX: return mix(mix(h, a & 1), (a >>> 1) & 1);
    case CBR: return mix(h, a);
    case TMA: return mix(mix(h, a & 0xffff), a >>> 16);
    case PIP: return mix(mix(mix(h, lo), hi), a);
    case TNT_64: return mix(mix(mix(h, a), lo), hi);
    default: return h; // psb, psbend, ovf, stop
  }
}
