// Packet byte writers for the generator: a preallocated scratch buffer, the
// CPU's LastIP (IP compression, docs/sdm/packets.md §5), its TNT register
// (docs/sdm/packets.md §6: TNT-8 only, written at 6 results or before any
// non-timing packet) and CYC insertion (§3.11). No `Packet` objects and no
// allocation: the hot path writes bytes directly. The subclass decides where
// the bytes go (`makeRoom`): the internal buffer, the sink, or the bin
// during an overflow.
import * as O from './opcodes.js';

/** Scratch capacity; `limit` never exceeds it. Every single packet is at most 16 bytes. */
export const SCRATCH_BYTES = 1 << 16;
const TWO32 = 4294967296;
/** Payload bytes per IPBytes value (docs/sdm/packets.md §5). */
const IP_PAYLOAD = [0, 2, 4, 6, 6, 0, 8, 0] as const;

/** Packet writers on a scratch buffer; the subclass supplies `makeRoom`. */
export abstract class PacketEmitter {
  /** Scratch: bytes [0, pos) are written and not yet handed on. */
  protected readonly buf = new Uint8Array(SCRATCH_BYTES + 64);
  protected pos = 0;
  /** `makeRoom` runs before a packet that would end beyond `limit`. */
  protected limit = 0;
  /** Core cycles so far (the modelled clock, see clock.ts). */
  protected cycles = 0;

  // LastIP as low 32 bits (unsigned) and the rest (signed): docs/sdm/packets.md §5.
  protected lastLo = 0;
  protected lastHi = 0;
  /** The next IP packet must be written uncompressed (first IP after OVF, docs/sdm/packets.md §5, §12). */
  protected postOvf = false;

  // TNT register: results oldest-first from the top; `tntN` results pending.
  protected tntBits = 0;
  protected tntN = 0;
  private tntCycle = 0;

  // CYC (docs/sdm/packets.md §3.11): CYCEn, minimum spacing (≥ 1: one CYC per cycle), last CYC time.
  protected CYCEn = false;
  protected cycMin = 1;
  protected lastCyc = 0;

  /** Make room for an `n`-byte packet at `pos` (flush, or start/continue an overflow). */
  protected abstract makeRoom(n: number): void;

  /** Sets LastIP to 0 (at a PSB; docs/sdm/packets.md §5). */
  protected resetLastIp(): void {
    this.lastLo = 0;
    this.lastHi = 0;
  }

  /** The CPU's LastIP, as an IP number. */
  get lastIp(): number {
    return this.lastHi * TWO32 + this.lastLo;
  }

  /** Adds one TNT result (1 = taken jcc or compressed RET); writes a TNT-8 at 6 results. */
  protected tntBit(taken: number): void {
    if (this.tntN === 0) this.tntCycle = this.cycles;
    this.tntBits = (this.tntBits << 1) | taken;
    if (++this.tntN === 6) this.writeTnt();
  }

  /** Writes the pending results as one TNT-8: stop bit above N results, oldest highest (§3.2). */
  protected writeTnt(): void {
    if (this.CYCEn) this.cyc(this.tntCycle);   // a CYC before a TNT times its first branch
    if (this.pos + 1 > this.limit) this.makeRoom(1);
    this.buf[this.pos++] = ((1 << this.tntN) | this.tntBits) << 1;
    this.tntBits = 0;
    this.tntN = 0;
  }

  /** Forgets pending TNT results (they are lost in an overflow). */
  protected dropTnt(): void {
    this.tntBits = 0;
    this.tntN = 0;
  }

  /** CYC before a CYC-eligible packet written at cycle `at`, if the threshold has elapsed (§3.11). */
  protected cyc(at: number): void {
    let v = at - this.lastCyc;
    if (v < this.cycMin) return;
    this.lastCyc = at;
    let size = 1;
    for (let r = Math.floor(v / 32); r > 0; r = Math.floor(r / 128)) size++;
    if (this.pos + size > this.limit) this.makeRoom(size);
    const b = this.buf;
    let rest = Math.floor(v / 32);
    b[this.pos++] = 0x03 | ((v & 0x1f) << 3) | (rest > 0 ? 0x04 : 0);
    while (rest > 0) {
      v = rest & 0x7f;
      rest = Math.floor(rest / 128);
      b[this.pos++] = (v << 1) | (rest > 0 ? 1 : 0);
    }
  }

  /** An IP packet (TIP/TIP.PGE/TIP.PGD/FUP opcode) with the model's compression policy (§5). */
  protected ipPacket(opc: number, ip: number): void {
    if (this.tntN !== 0) this.writeTnt();
    if (this.CYCEn && opc !== O.OPC_FUP) this.cyc(this.cycles);
    const lo = ip >>> 0;
    const hi = Math.floor(ip / TWO32);
    const canon48 = hi >= -32768 && hi < 32768;
    let ipb: number;
    if (this.postOvf) {
      // First IP after an OVF: never compressed against LastIP (docs/sdm/packets.md §5 exception).
      this.postOvf = false;
      ipb = canon48 ? O.IPB_SEXT48 : O.IPB_FULL;
    } else if (hi === this.lastHi) {
      ipb = lo >>> 16 === this.lastLo >>> 16 ? O.IPB_UPDATE16 : O.IPB_UPDATE32;
    } else if (canon48) {
      ipb = O.IPB_SEXT48;
    } else {
      ipb = hi >> 16 === this.lastHi >> 16 ? O.IPB_UPDATE48 : O.IPB_FULL;
    }
    const size = IP_PAYLOAD[ipb]!;
    if (this.pos + 1 + size > this.limit) this.makeRoom(1 + size);
    const b = this.buf;
    let p = this.pos;
    b[p++] = (ipb << 5) | opc;
    b[p++] = lo & 0xff; b[p++] = (lo >>> 8) & 0xff;
    if (size > 2) { b[p++] = (lo >>> 16) & 0xff; b[p++] = lo >>> 24; }
    if (size > 4) { b[p++] = hi & 0xff; b[p++] = (hi >>> 8) & 0xff; }
    if (size > 6) { b[p++] = (hi >>> 16) & 0xff; b[p++] = (hi >>> 24) & 0xff; }
    this.pos = p;
    this.lastLo = lo;
    this.lastHi = hi;
  }

  /** An IP packet with IPBytes = 000 (suppressed): LastIP is not changed (§5). */
  protected ipSuppressed(opc: number): void {
    if (this.tntN !== 0) this.writeTnt();
    if (this.CYCEn && opc !== O.OPC_FUP) this.cyc(this.cycles);
    if (this.pos + 1 > this.limit) this.makeRoom(1);
    this.buf[this.pos++] = opc;
  }

  /** MODE.Exec (`99 0000 0 IF D L`, IF=0 without Event Trace; §3.5). */
  protected modeExec(mode: number): void {
    this.ext2(O.OPC_MODE, mode & 3, true);
  }

  /** MODE.TSX with InTX/TXAbort (§3.5). */
  protected modeTsx(intx: boolean, abort: boolean): void {
    this.ext2(O.OPC_MODE, 0x20 | (abort ? 2 : 0) | (intx ? 1 : 0), true);
  }

  /** PIP with NR=0 for 4-level paging: CR3[51:12] in bytes 3–7, CR3[11:5] = 0 (§3.4). */
  protected pip(cr3: number): void {
    if (this.tntN !== 0) this.writeTnt();
    if (this.CYCEn) this.cyc(this.cycles);
    if (this.pos + 8 > this.limit) this.makeRoom(8);
    const b = this.buf;
    let p = this.pos;
    const pfn = Math.floor(cr3 / 4096);
    b[p++] = O.EXT; b[p++] = O.EXT_PIP; b[p++] = 0;
    b[p++] = pfn & 0xff; b[p++] = (pfn >>> 8) & 0xff; b[p++] = (pfn >>> 16) & 0xff; b[p++] = (pfn >>> 24) & 0xff;
    b[p++] = Math.floor(pfn / TWO32) & 0xff;
    this.pos = p;
  }

  /** PSB: `02 82` × 8. Does not reset LastIP by itself. */
  protected psb(): void {
    if (this.tntN !== 0) this.writeTnt();
    if (this.pos + O.PSB_SIZE > this.limit) this.makeRoom(O.PSB_SIZE);
    for (let i = 0; i < 8; i++) { this.buf[this.pos++] = O.EXT; this.buf[this.pos++] = O.EXT_PSB; }
  }

  /** PSBEND `02 23`. */
  protected psbend(): void { this.ext2(O.EXT, O.EXT_PSBEND, false); }

  /** TraceStop `02 83`. */
  protected traceStopPacket(): void { this.ext2(O.EXT, O.EXT_TRACESTOP, false); }

  /** OVF `02 F3` (CYC-eligible; the cycle counter restarts at the OVF: §3.11). */
  protected ovf(): void {
    if (this.CYCEn) this.cyc(this.cycles);
    if (this.pos + 2 > this.limit) this.makeRoom(2);
    this.buf[this.pos++] = O.EXT; this.buf[this.pos++] = O.EXT_OVF;
    this.lastCyc = this.cycles;
  }

  /** CBR `02 03 ratio 00` (timing: does not flush TNT). */
  protected cbr(ratio: number): void {
    if (this.pos + 4 > this.limit) this.makeRoom(4);
    const b = this.buf;
    b[this.pos++] = O.EXT; b[this.pos++] = O.EXT_CBR; b[this.pos++] = ratio & 0xff; b[this.pos++] = 0;
  }

  /** TSC `19` + TSC[55:0] (timing, CYC-eligible). */
  protected tscPacket(tsc: number): void {
    if (this.CYCEn) this.cyc(this.cycles);
    if (this.pos + 8 > this.limit) this.makeRoom(8);
    const b = this.buf;
    b[this.pos++] = O.OPC_TSC;
    const lo = tsc >>> 0;
    const hi = Math.floor(tsc / TWO32);
    b[this.pos++] = lo & 0xff; b[this.pos++] = (lo >>> 8) & 0xff; b[this.pos++] = (lo >>> 16) & 0xff; b[this.pos++] = lo >>> 24;
    b[this.pos++] = hi & 0xff; b[this.pos++] = (hi >>> 8) & 0xff; b[this.pos++] = (hi >>> 16) & 0xff;
  }

  /** TMA `02 73 CTC[7:0] CTC[15:8] 00 FC[7:0] FC[8]` (§3.10). */
  protected tma(ctc: number, fc: number): void {
    if (this.pos + 7 > this.limit) this.makeRoom(7);
    const b = this.buf;
    b[this.pos++] = O.EXT; b[this.pos++] = O.EXT_TMA;
    b[this.pos++] = ctc & 0xff; b[this.pos++] = (ctc >>> 8) & 0xff; b[this.pos++] = 0;
    b[this.pos++] = fc & 0xff; b[this.pos++] = (fc >>> 8) & 1;
  }

  /** MTC `59 CTC` (timing, CYC-eligible). */
  protected mtc(ctc: number, at: number): void {
    if (this.CYCEn) this.cyc(at);
    if (this.pos + 2 > this.limit) this.makeRoom(2);
    this.buf[this.pos++] = O.OPC_MTC; this.buf[this.pos++] = ctc & 0xff;
  }

  /** PTW with a 4- or 8-byte payload; `ip` = FUPonPTW (a FUP follows) (§3.16). */
  protected ptw(value: bigint, size: 4 | 8, ip: boolean): void {
    if (this.tntN !== 0) this.writeTnt();
    if (this.CYCEn) this.cyc(this.cycles);
    if (this.pos + 10 > this.limit) this.makeRoom(10);
    const b = this.buf;
    b[this.pos++] = O.EXT;
    b[this.pos++] = (ip ? 0x80 : 0) | (size === 8 ? 0x20 : 0) | O.EXT_PTW;
    let v = BigInt.asUintN(size * 8, value);
    for (let i = 0; i < size; i++) { b[this.pos++] = Number(v & 0xffn); v >>= 8n; }
  }

  /** A two-byte non-timing packet (pending TNT goes first); `eligible` = CYC-eligible. */
  private ext2(b0: number, b1: number, eligible: boolean): void {
    if (this.tntN !== 0) this.writeTnt();
    if (eligible && this.CYCEn) this.cyc(this.cycles);
    if (this.pos + 2 > this.limit) this.makeRoom(2);
    this.buf[this.pos++] = b0; this.buf[this.pos++] = b1;
  }
}
