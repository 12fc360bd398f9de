// The decoder's reusable, allocation-free packet record: numeric fields only,
// so the hot loop allocates nothing. `toPacket` turns it into the Packet union
// (allocating; for tests and JSON, not for the hot loop).
import { assertNever } from '../base/assert-never.js';
import { IPC_BY_IPBYTES, type Packet, type PacketType } from './packet.js';

/** Small integer kind codes (shared with the C checksum twin: keep the numbers). */
export const PacketKind = {
  error: 0, pad: 1, psb: 2, psbend: 3, ovf: 4, stop: 5, tip: 6, 'tip.pge': 7, 'tip.pgd': 8, fup: 9,
  'tnt.8': 10, 'tnt.64': 11, 'mode.exec': 12, 'mode.tsx': 13, pip: 14, vmcs: 15, cbr: 16, tsc: 17,
  tma: 18, mtc: 19, cyc: 20, mnt: 21, exstop: 22, mwait: 23, pwre: 24, pwrx: 25, ptw: 26, bbp: 27,
  bip: 28, bep: 29, cfe: 30, evd: 31, trig: 32,
} as const;
export type PacketKindCode = (typeof PacketKind)[keyof typeof PacketKind];

/** Decode error codes in `PacketRecord.error`. */
export const DecodeError = { none: 0, bad_opc: 1, bad_packet: 2, eos: 3 } as const;
export type DecodeErrorCode = (typeof DecodeError)[keyof typeof DecodeError];
/** Names of the error codes, libipt's spelling (docs/formats/packet-json.md "Errors"). */
export const ERROR_NAMES: readonly string[] = ['none', 'bad_opc', 'bad_packet', 'eos'];

const NAMES: string[] = [];
for (const [name, code] of Object.entries(PacketKind)) NAMES[code] = name;

/** The packet-json type name of a kind code ('error' for 0). */
export function packetName(kind: number): string {
  return NAMES[kind] ?? 'error';
}

/**
 * One decoded packet, reused by the decoder. Only the fields of the current
 * `kind` are meaningful; others keep stale values. 64-bit values are split in
 * unsigned 32-bit halves `lo`/`hi`.
 */
export class PacketRecord {
  /** PacketKind code; 0 = error record. */
  kind = 0;
  /** Absolute offset of the first byte (baseOffset + index). */
  offset = 0;
  /** Bytes including the opcode; 0 for an error record. */
  size = 0;
  /** DecodeError code (0 none, 1 bad_opc, 2 bad_packet, 3 eos). */
  error = 0;
  /** tip/tip.pge/tip.pgd/fup: IPBytes (0,1,2,3,4,6). */
  ipBytes = 0;
  /**
   * Low/high 32 bits of the wide value: the raw IP payload (IP packets), the
   * TNT result bits (oldest in bit n-1), pip cr3, vmcs base, tsc, cyc value,
   * mnt payload, ptw payload, bip value, evd payload; mwait: lo = hints, hi = ext.
   */
  lo = 0;
  hi = 0;
  /** TNT: number of results. */
  n = 0;
  /** mode.exec: CS.L, CS.D, IF (0/1). */
  csl = 0;
  csd = 0;
  iflag = 0;
  /** mode.tsx: InTX, TXAbort (0/1). */
  intx = 0;
  abrt = 0;
  /** pip: NR (0/1). */
  nr = 0;
  /** cbr: core:bus ratio. */
  ratio = 0;
  /** tma: CTC[15:0]; mtc: CTC[7:0]. */
  ctc = 0;
  /** tma: FastCounter. */
  fc = 0;
  /** exstop/ptw/bep/cfe/trig: the IP flag (0/1). */
  ip = 0;
  /** pwre: resolved thread C-state, sub C-state, HW (byte 2 bit 7). */
  state = 0;
  subState = 0;
  hw = 0;
  /** pwrx: last / deepest core C-state, wake reasons (0/1). */
  last = 0;
  deepest = 0;
  interrupt = 0;
  store = 0;
  autonomous = 0;
  /** ptw: PayloadBytes (0 = 4 bytes, 1 = 8 bytes). */
  plc = 0;
  /** bbp/bip: SZ (1 = 4-byte block items). */
  sz = 0;
  /** bbp: block type (bits 4:0). */
  blockType = 0;
  /** bip: item ID. */
  id = 0;
  /** cfe: type (bits 4:0) and vector. */
  cfeType = 0;
  vector = 0;
  /** evd: type (bits 4:0). */
  evdType = 0;
  /** trig: ICNTV, MULT, TRBV, ICNT. */
  icntv = 0;
  mult = 0;
  trbv = 0;
  icnt = 0;

  /** Copies every field of `other` (e.g. to keep a record past the next `next()`). */
  copyFrom(other: PacketRecord): this {
    Object.assign(this, other);
    return this;
  }
}

/** Joins two uint32 halves into a bigint. */
export function joinU64(lo: number, hi: number): bigint {
  return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
}

/** The Packet a (non-error) record holds; throws on an error record. Allocating. */
export function toPacket(rec: PacketRecord): Packet {
  const type = packetName(rec.kind) as PacketType | 'error';
  const wide = (): bigint => joinU64(rec.lo, rec.hi);
  switch (type) {
    case 'error':
      throw new Error(`toPacket: error record at offset ${rec.offset} (${ERROR_NAMES[rec.error]})`);
    case 'pad': case 'psb': case 'psbend': case 'ovf': case 'stop':
      return { type };
    case 'tnt.8': case 'tnt.64':
      return { type, n: rec.n, bits: wide() };
    case 'tip': case 'tip.pge': case 'tip.pgd': case 'fup':
      return { type, ipc: IPC_BY_IPBYTES[rec.ipBytes] ?? 'suppressed', ip: wide() };
    case 'mode.exec':
      return { type, csl: rec.csl === 1, csd: rec.csd === 1, if: rec.iflag === 1 };
    case 'mode.tsx':
      return { type, intx: rec.intx === 1, abrt: rec.abrt === 1 };
    case 'pip':
      return { type, cr3: wide(), nr: rec.nr === 1 };
    case 'vmcs':
      return { type, base: wide() };
    case 'cbr':
      return { type, ratio: rec.ratio };
    case 'tsc':
      return { type, tsc: wide() };
    case 'tma':
      return { type, ctc: rec.ctc, fc: rec.fc };
    case 'mtc':
      return { type, ctc: rec.ctc };
    case 'cyc':
      return { type, value: wide() };
    case 'mnt':
      return { type, payload: wide() };
    case 'exstop':
      return { type, ip: rec.ip === 1 };
    case 'mwait':
      return { type, hints: rec.lo >>> 0, ext: rec.hi >>> 0 };
    case 'pwre':
      return { type, state: rec.state, sub_state: rec.subState, hw: rec.hw === 1 };
    case 'pwrx':
      return {
        type, last: rec.last, deepest: rec.deepest,
        interrupt: rec.interrupt === 1, store: rec.store === 1, autonomous: rec.autonomous === 1,
      };
    case 'ptw':
      return { type, plc: rec.plc, payload: wide(), ip: rec.ip === 1 };
    case 'bbp':
      return { type, sz: rec.sz === 1, block_type: rec.blockType };
    case 'bip':
      return { type, sz: rec.sz === 1, id: rec.id, value: wide() };
    case 'bep':
      return { type, ip: rec.ip === 1 };
    case 'cfe':
      return { type, ip: rec.ip === 1, cfe_type: rec.cfeType, vector: rec.vector };
    case 'evd':
      return { type, evd_type: rec.evdType, payload: wide() };
    case 'trig':
      return { type, ip: rec.ip === 1, icntv: rec.icntv === 1, mult: rec.mult === 1, trbv: rec.trbv, icnt: rec.icnt };
    default:
      return assertNever(type);
  }
}
