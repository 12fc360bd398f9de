// The packet encoder: one encoding for every packet of the Packet union
// (an encoder for every decoder). Layouts: docs/sdm/packets.md §3;
// reserved bits are written as 0 (docs/sdm/packets.md conventions).
import { PtError } from '../base/errors.js';
import { EXT, EXT2_MNT, IP_PAYLOAD_BYTES, MOB, OPC, PSB_HI, PSB_LO, PSB_REPEAT, TNT_64_MAX, TNT_8_MAX } from './opcodes.js';
import { assertNever } from '../base/assert-never.js';
import { IPBYTES_BY_IPC, type Packet } from './packet.js';

const M32 = 0xffff_ffffn;

function bad(p: Packet, why: string): never {
  throw new PtError('bad_packet', `cannot encode ${p.type}: ${why}`);
}

/** Checks that `v` is an unsigned integer of at most `bits` bits. */
function checkUint(p: Packet, name: string, v: number, bits: number): number {
  if (!Number.isInteger(v) || v < 0 || v >= 2 ** bits) bad(p, `${name}=${v} is not a ${bits}-bit unsigned integer`);
  return v;
}

function checkWide(p: Packet, name: string, v: bigint, bits: number): bigint {
  if (v < 0n || v >> BigInt(bits) !== 0n) bad(p, `${name}=0x${v.toString(16)} does not fit in ${bits} bits`);
  return v;
}

const b = (x: boolean): number => (x ? 1 : 0);

/** A growable byte buffer of encoded packets. */
export class PacketWriter {
  private buf: Uint8Array;
  private len = 0;

  constructor(initialCapacity = 4096) {
    this.buf = new Uint8Array(Math.max(16, initialCapacity));
  }

  /** Bytes written so far. */
  get length(): number {
    return this.len;
  }

  /** A copy of the bytes written so far. */
  bytes(): Uint8Array {
    return this.buf.slice(0, this.len);
  }

  /** Appends raw bytes (e.g. deliberately malformed data in tests). */
  raw(bytes: ArrayLike<number>): void {
    this.ensure(bytes.length);
    for (let i = 0; i < bytes.length; i++) this.buf[this.len++] = bytes[i]! & 0xff;
  }

  /** Appends a run of `n` PAD packets: one zero byte each (docs/sdm/packets.md, PAD). */
  pad(n: number): void {
    this.ensure(n);
    this.buf.fill(0, this.len, this.len + n);
    this.len += n;
  }

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  private u8(v: number): void {
    this.buf[this.len++] = v & 0xff;
  }

  /** Little-endian, `n` bytes of `v` (n ≤ 8; spec conventions: payloads are little-endian). */
  private le(v: bigint, n: number): void {
    let lo = Number(v & M32);
    let hi = Number((v >> 32n) & M32);
    for (let i = 0; i < n; i++) {
      if (i < 4) { this.u8(lo); lo >>>= 8; } else { this.u8(hi); hi >>>= 8; }
    }
  }

  private leNum(v: number, n: number): void {
    for (let i = 0; i < n; i++) { this.u8(v); v >>>= 8; }
  }

  /** Appends one packet; throws PtError('bad_packet') (and writes nothing) if it cannot be encoded. */
  push(p: Packet): void {
    this.ensure(16);
    const start = this.len;
    try {
      this.encode(p);
    } catch (e) {
      this.len = start;
      throw e;
    }
  }

  private encode(p: Packet): void {
    switch (p.type) {
      case 'pad': this.u8(OPC.PAD); return;
      case 'psb':
        for (let i = 0; i < PSB_REPEAT; i++) { this.u8(PSB_HI); this.u8(PSB_LO); }
        return;
      case 'psbend': this.u8(OPC.EXT); this.u8(EXT.PSBEND); return;
      case 'ovf': this.u8(OPC.EXT); this.u8(EXT.OVF); return;
      case 'stop': this.u8(OPC.EXT); this.u8(EXT.STOP); return;
      case 'tnt.8': {
        // spec §3.2: stop bit above the n results, the whole shifted left by the header bit 0.
        checkUint(p, 'n', p.n, 3);
        if (p.n < 1 || p.n > TNT_8_MAX) bad(p, `n=${p.n} outside 1..${TNT_8_MAX}`);
        checkWide(p, 'bits', p.bits, p.n);
        this.u8(((1 << p.n) | Number(p.bits)) << 1);
        return;
      }
      case 'tnt.64': {
        if (!Number.isInteger(p.n) || p.n < 1 || p.n > TNT_64_MAX) bad(p, `n=${p.n} outside 1..${TNT_64_MAX}`);
        checkWide(p, 'bits', p.bits, p.n);
        this.u8(OPC.EXT); this.u8(EXT.TNT_64);
        this.le((1n << BigInt(p.n)) | p.bits, 6);
        return;
      }
      case 'tip': case 'tip.pge': case 'tip.pgd': case 'fup': {
        const ipBytes = IPBYTES_BY_IPC[p.ipc];
        if (ipBytes === undefined) bad(p, `unknown ipc ${String(p.ipc)}`);
        const n = IP_PAYLOAD_BYTES[ipBytes]!;
        checkWide(p, 'ip', p.ip, n * 8);
        const opc = p.type === 'tip' ? OPC.TIP : p.type === 'tip.pge' ? OPC.TIP_PGE : p.type === 'tip.pgd' ? OPC.TIP_PGD : OPC.FUP;
        this.u8((ipBytes << 5) | opc);
        this.le(p.ip, n);
        return;
      }
      case 'mode.exec':
        this.u8(OPC.MODE);
        this.u8(b(p.csl) * MOB.EXEC_CSL | b(p.csd) * MOB.EXEC_CSD | b(p.if) * MOB.EXEC_IF);
        return;
      case 'mode.tsx':
        this.u8(OPC.MODE);
        this.u8(0x20 | b(p.intx) * MOB.TSX_INTX | b(p.abrt) * MOB.TSX_ABRT);
        return;
      case 'pip': {
        // spec §3.4: payload48 = (CR3[51:5] << 1) | NR.
        checkWide(p, 'cr3', p.cr3, 52);
        if ((p.cr3 & 0x1fn) !== 0n) bad(p, 'cr3 bits 4:0 must be 0');
        this.u8(OPC.EXT); this.u8(EXT.PIP);
        this.le(((p.cr3 >> 5n) << 1n) | BigInt(b(p.nr)), 6);
        return;
      }
      case 'vmcs':
        // spec §3.12: VMCS-pointer[51:12] in 5 bytes.
        checkWide(p, 'base', p.base, 52);
        if ((p.base & 0xfffn) !== 0n) bad(p, 'base bits 11:0 must be 0');
        this.u8(OPC.EXT); this.u8(EXT.VMCS);
        this.le(p.base >> 12n, 5);
        return;
      case 'cbr':
        this.u8(OPC.EXT); this.u8(EXT.CBR); this.u8(checkUint(p, 'ratio', p.ratio, 8)); this.u8(0);
        return;
      case 'tsc':
        this.u8(OPC.TSC); this.le(checkWide(p, 'tsc', p.tsc, 56), 7);
        return;
      case 'tma':
        // spec §3.10: 02 73 CTC[7:0] CTC[15:8] 00 FC[7:0] FC[8].
        checkUint(p, 'ctc', p.ctc, 16); checkUint(p, 'fc', p.fc, 9);
        this.u8(OPC.EXT); this.u8(EXT.TMA);
        this.leNum(p.ctc, 2); this.u8(0); this.leNum(p.fc, 2);
        return;
      case 'mtc':
        this.u8(OPC.MTC); this.u8(checkUint(p, 'ctc', p.ctc, 8));
        return;
      case 'cyc': {
        // spec §3.11: shortest form, at most 9 bytes (value < 2^61).
        let rest = checkWide(p, 'value', p.value, 61);
        let first = 0x03 | Number((rest & 0x1fn) << 3n);
        rest >>= 5n;
        if (rest !== 0n) first |= 0x04;
        this.u8(first);
        while (rest !== 0n) {
          let x = Number((rest & 0x7fn) << 1n);
          rest >>= 7n;
          if (rest !== 0n) x |= 1;
          this.u8(x);
        }
        return;
      }
      case 'mnt':
        this.u8(OPC.EXT); this.u8(EXT.EXT2); this.u8(EXT2_MNT);
        this.le(checkWide(p, 'payload', p.payload, 64), 8);
        return;
      case 'exstop':
        this.u8(OPC.EXT); this.u8(p.ip ? EXT.EXSTOP_IP : EXT.EXSTOP);
        return;
      case 'mwait':
        checkUint(p, 'hints', p.hints, 32); checkUint(p, 'ext', p.ext, 32);
        this.u8(OPC.EXT); this.u8(EXT.MWAIT); this.leNum(p.hints, 4); this.leNum(p.ext, 4);
        return;
      case 'pwre':
        // spec §3.17: byte 2 bit 7 = HW; byte 3 = state[7:4] | sub-state[3:0].
        checkUint(p, 'state', p.state, 4); checkUint(p, 'sub_state', p.sub_state, 4);
        this.u8(OPC.EXT); this.u8(EXT.PWRE); this.u8(b(p.hw) << 7); this.u8((p.state << 4) | p.sub_state);
        return;
      case 'pwrx':
        // spec §3.17: byte 2 = last[7:4] | deepest[3:0]; byte 3: bit0 interrupt, bit2 store, bit3 hardware.
        checkUint(p, 'last', p.last, 4); checkUint(p, 'deepest', p.deepest, 4);
        this.u8(OPC.EXT); this.u8(EXT.PWRX); this.u8((p.last << 4) | p.deepest);
        this.u8(b(p.interrupt) | (b(p.store) << 2) | (b(p.autonomous) << 3));
        this.u8(0); this.u8(0); this.u8(0);
        return;
      case 'ptw': {
        // spec §3.16: byte 1 = IP << 7 | PayloadBytes << 5 | 10010b; 10b/11b are reserved.
        if (p.plc !== 0 && p.plc !== 1) bad(p, `plc=${p.plc} is reserved`);
        const n = p.plc === 0 ? 4 : 8;
        checkWide(p, 'payload', p.payload, n * 8);
        this.u8(OPC.EXT); this.u8((b(p.ip) << 7) | (p.plc << 5) | EXT.PTW);
        this.le(p.payload, n);
        return;
      }
      case 'bbp':
        checkUint(p, 'block_type', p.block_type, 5);
        this.u8(OPC.EXT); this.u8(EXT.BBP); this.u8((b(p.sz) << 7) | p.block_type);
        return;
      case 'bip': {
        // spec §3.18: ID[4:0] << 3 | 100b, then 4 (SZ=1) or 8 bytes.
        checkUint(p, 'id', p.id, 5);
        const n = p.sz ? 4 : 8;
        checkWide(p, 'value', p.value, n * 8);
        this.u8((p.id << 3) | OPC.BIP);
        this.le(p.value, n);
        return;
      }
      case 'bep':
        this.u8(OPC.EXT); this.u8(p.ip ? EXT.BEP_IP : EXT.BEP);
        return;
      case 'cfe':
        checkUint(p, 'cfe_type', p.cfe_type, 5); checkUint(p, 'vector', p.vector, 8);
        this.u8(OPC.EXT); this.u8(EXT.CFE); this.u8((b(p.ip) << 7) | p.cfe_type); this.u8(p.vector);
        return;
      case 'evd':
        checkUint(p, 'evd_type', p.evd_type, 5);
        this.u8(OPC.EXT); this.u8(EXT.EVD); this.u8(p.evd_type);
        this.le(checkWide(p, 'payload', p.payload, 64), 8);
        return;
      case 'trig':
        // spec §3.20: D9, flags (IP bit 7, ICNTV bit 6, MULT bit 5), TRBV, [ICNT 2 bytes].
        checkUint(p, 'trbv', p.trbv, 8); checkUint(p, 'icnt', p.icnt, 16);
        if (!p.icntv && p.icnt !== 0) bad(p, 'icnt without icntv');
        this.u8(OPC.TRIG); this.u8((b(p.ip) << 7) | (b(p.icntv) << 6) | (b(p.mult) << 5)); this.u8(p.trbv);
        if (p.icntv) this.leNum(p.icnt, 2);
        return;
      default:
        return assertNever(p);
    }
  }
}

/** The bytes of one packet; throws PtError('bad_packet') if it cannot be encoded. */
export function encodePacket(p: Packet): Uint8Array {
  const w = new PacketWriter(16);
  w.push(p);
  return w.bytes();
}

/** The bytes of a packet sequence. */
export function encodePackets(ps: Iterable<Packet>): Uint8Array {
  const w = new PacketWriter();
  for (const p of ps) w.push(p);
  return w.bytes();
}
