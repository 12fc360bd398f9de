// ptdump-like text lines written as bytes (ascii-out.ts): the same lines as TextFormatter
// (text.ts) byte for byte (test/decode/json-out.test.ts checks it on arbitrary packets and bytes)
// for the packets a trace is made of; the rare kinds go through TextFormatter itself. Last IP is
// TextFormatter's, so both paths see every record in order.
import { ascii, putBytes, putHex64, type AsciiOut } from './ascii-out.js';
import { ERROR_NAMES, PacketKind, packetName, type PacketRecord } from './record.js';
import { TextFormatter } from './text.js';

const HEX = ascii('0123456789abcdef');
const NAMES: Uint8Array[] = [];
for (let k = 1; k <= 32; k++) NAMES[k] = ascii(`  ${packetName(k).padEnd(10)}`);
const BARE: Uint8Array[] = [];
for (let k = 1; k <= 32; k++) BARE[k] = ascii(`  ${packetName(k)}`);
const ERRORS = ERROR_NAMES.map((n) => ascii(`  [error: ${n}]`));
const IPC_SHORT = ['0', '1: 16', '2: 32', '3: s48', '4: 48', '?', '6: 64', '?'].map((s) => ascii(`${s}: `));
const SUPPRESSED = ascii('0: (suppressed)'), IP = ascii('ip '), CTC = ascii('ctc 0x'), FC = ascii(' fc 0x');
const PAD_TO = 28;

/** Kinds written here; the others through TextFormatter. */
const FAST = new Uint8Array(64);
for (const k of ['pad', 'psb', 'psbend', 'ovf', 'stop', 'tip', 'tip.pge', 'tip.pgd', 'fup', 'tnt.8', 'tnt.64', 'cbr', 'tsc', 'tma', 'mtc', 'cyc'] as const) FAST[PacketKind[k]] = 1;

/** The 16-digit zero-padded hex offset. */
function putOffset(buf: Uint8Array, p: number, off: number): number {
  const hi = Math.floor(off / 0x1_0000_0000) >>> 0, lo = off >>> 0;
  for (let s = 28; s >= 0; s -= 4) buf[p++] = HEX[(hi >>> s) & 0xf]!;
  for (let s = 28; s >= 0; s -= 4) buf[p++] = HEX[(lo >>> s) & 0xf]!;
  return p;
}

/** Short lowercase hex without 0x of a small number. */
function putSmallHex(buf: Uint8Array, p: number, v: number): number {
  let shift = 28;
  while (shift > 0 && (v >>> shift) === 0) shift -= 4;
  for (; shift >= 0; shift -= 4) buf[p++] = HEX[(v >>> shift) & 0xf]!;
  return p;
}

/** Writes TextFormatter's lines as bytes, keeping its Last IP. */
export class TextOut {
  private readonly text = new TextFormatter();

  constructor(private readonly o: AsciiOut) {}

  /** Takes `rec` without writing it (a packet left out of the lines still moves Last IP). */
  skip(rec: PacketRecord): void {
    this.text.lastIp.feed(rec);
  }

  /** Writes the text line of `rec` (with its newline). */
  write(rec: PacketRecord): void {
    const o = this.o, kind = rec.kind;
    if (kind !== PacketKind.error && FAST[kind] === 0) { o.line(this.text.line(rec)); return; }
    let p = o.begin(160);
    const buf = o.buffer;
    p = putOffset(buf, p, rec.offset);
    if (kind === PacketKind.error) { p = putBytes(buf, p, ERRORS[rec.error]!); buf[p++] = 10; o.end(p); return; }
    const last = this.text.lastIp;
    const hasIp = last.feed(rec);
    switch (kind) {
      case PacketKind.tip: case PacketKind['tip.pge']: case PacketKind['tip.pgd']: case PacketKind.fup: {
        p = putBytes(buf, p, NAMES[kind]!);
        if (rec.ipBytes === 0) { p = putBytes(buf, p, SUPPRESSED); break; }
        const start = p;
        p = putBytes(buf, p, IPC_SHORT[rec.ipBytes]!); p = putHex64(buf, p, rec.lo, rec.hi);
        while (p < start + PAD_TO) buf[p++] = 32;
        if (hasIp) { p = putBytes(buf, p, IP); p = putHex64(buf, p, last.lo, last.hi); }
        break;
      }
      case PacketKind['tnt.8']: case PacketKind['tnt.64']: {
        p = putBytes(buf, p, NAMES[kind]!);
        const n = rec.n, lo = rec.lo >>> 0, hi = rec.hi >>> 0;
        for (let i = n - 1; i >= 32; i--) buf[p++] = ((hi >>> (i - 32)) & 1) !== 0 ? 33 : 46;
        for (let i = Math.min(n, 32) - 1; i >= 0; i--) buf[p++] = ((lo >>> i) & 1) !== 0 ? 33 : 46;
        break;
      }
      case PacketKind.cbr: {
        p = putBytes(buf, p, NAMES[kind]!);
        const r = rec.ratio;
        if (r >= 100) buf[p++] = 48 + Math.floor(r / 100);
        if (r >= 10) buf[p++] = 48 + (Math.floor(r / 10) % 10);
        buf[p++] = 48 + (r % 10);
        break;
      }
      case PacketKind.tsc: case PacketKind.cyc:
        p = putBytes(buf, p, NAMES[kind]!); p = putHex64(buf, p, rec.lo, rec.hi);
        break;
      case PacketKind.tma:
        p = putBytes(buf, p, NAMES[kind]!); p = putBytes(buf, p, CTC); p = putSmallHex(buf, p, rec.ctc); p = putBytes(buf, p, FC); p = putSmallHex(buf, p, rec.fc);
        break;
      case PacketKind.mtc:
        p = putBytes(buf, p, NAMES[kind]!); buf[p++] = 48; buf[p++] = 120; p = putSmallHex(buf, p, rec.ctc);
        break;
      default: // pad, psb, psbend, ovf, stop: the name alone, without padding
        p = putBytes(buf, p, BARE[kind]!);
    }
    buf[p++] = 10;
    o.end(p);
  }
}
