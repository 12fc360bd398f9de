// Packet JSON Lines written as bytes (ascii-out.ts): the same lines as packetJsonLine (json.ts)
// byte for byte — test/decode/json-out.test.ts checks it on arbitrary packets and bytes — for
// the packets a trace is made of; the rare kinds go through packetJsonLine itself.
import { ascii, putBytes, putDec, putHex64, type AsciiOut } from './ascii-out.js';
import { execModeName, packetJsonLine } from './json.js';
import { ERROR_NAMES, PacketKind, packetName, type PacketRecord } from './record.js';

const OFF = ascii('{"off":'), ERROR = ascii(',"error":"'), END_STR = ascii('"}');
const ERRORS = ERROR_NAMES.map(ascii);
const IPC = ['suppressed', 'update-16', 'update-32', 'sext-48', 'update-48', 'invalid', 'full', 'invalid'].map((n) => ascii(`,"ipc":"${n}"`));
const IP = ascii(',"ip":"'), N = ascii(',"n":'), BITS = ascii(',"bits":"'), CSL = ascii(',"csl":'), CSD = ascii(',"csd":'), MODE = ascii(',"mode":"');
const RATIO = ascii(',"ratio":'), TSC = ascii(',"tsc":"'), CTC = ascii(',"ctc":'), FC = ascii(',"fc":'), VALUE = ascii(',"value":"');
const CR3 = ascii(',"cr3":"'), NR = ascii('","nr":'), TRUE = ascii('true'), FALSE = ascii('false');
const MODES = new Map(['16bit', '32bit', '64bit', 'unknown'].map((m) => [m, ascii(`${m}"}`)]));

/** Kinds written here; the others (rare in traces) through packetJsonLine. */
const FAST = new Uint8Array(64);
for (const k of ['pad', 'psb', 'psbend', 'ovf', 'stop', 'tip', 'tip.pge', 'tip.pgd', 'fup', 'tnt.8', 'tnt.64', 'mode.exec', 'pip', 'cbr', 'tsc', 'tma', 'mtc', 'cyc'] as const) FAST[PacketKind[k]] = 1;

/** `,"size":N,"type":"NAME"` by kind and size (sizes 1..31), made when first needed. */
const HEADS: (Uint8Array | undefined)[] = [];
function headOf(kind: number, size: number): Uint8Array {
  const key = kind * 32 + size;
  return (HEADS[key] ??= ascii(`,"size":${size},"type":"${packetName(kind)}"`));
}

/**
 * Whole line ends, by payload, for the packets most lines are: TNT-8 (by bit count and bits) and
 * MTC (by CTC), from `,"size"` to the newline.
 */
const TNT8_ENDS: Uint8Array[] = [];
for (let n = 1; n <= 6; n++) {
  for (let bits = 0; bits < 1 << n; bits++) TNT8_ENDS[(n << 6) | bits] = ascii(`,"size":1,"type":"tnt.8","n":${n},"bits":"${bits.toString(2).padStart(n, '0')}"}\n`);
}
const MTC_ENDS = Array.from({ length: 256 }, (_, ctc) => ascii(`,"size":2,"type":"mtc","ctc":${ctc}}\n`));

/** The longest line written here: a TNT-64 (47 bits) or an IP packet with a full IP, with room to spare. */
const MAX_LINE = 160;

/** Writes the packet JSON line of `rec` (with its newline) to `o`. */
export function writePacketJson(o: AsciiOut, rec: PacketRecord): void {
  const kind = rec.kind;
  if (kind === PacketKind.error) {
    let p = o.begin(MAX_LINE);
    const buf = o.buffer;
    p = putBytes(buf, p, OFF); p = putDec(buf, p, rec.offset); p = putBytes(buf, p, ERROR); p = putBytes(buf, p, ERRORS[rec.error]!); p = putBytes(buf, p, END_STR);
    buf[p++] = 10;
    o.end(p);
    return;
  }
  if (FAST[kind] === 0 || rec.size >= 32) { o.line(packetJsonLine(rec)); return; }
  let p = o.begin(MAX_LINE);
  const buf = o.buffer;
  const end = kind === PacketKind['tnt.8'] && rec.n <= 6 ? TNT8_ENDS[(rec.n << 6) | (rec.lo & ((1 << rec.n) - 1))]
    : kind === PacketKind.mtc && rec.size === 2 ? MTC_ENDS[rec.ctc & 0xff] : undefined;
  if (end !== undefined) {
    p = putBytes(buf, p, OFF); p = putDec(buf, p, rec.offset); p = putBytes(buf, p, end);
    o.end(p);
    return;
  }
  p = putBytes(buf, p, OFF); p = putDec(buf, p, rec.offset); p = putBytes(buf, p, headOf(kind, rec.size));
  switch (kind) {
    case PacketKind.tip: case PacketKind['tip.pge']: case PacketKind['tip.pgd']: case PacketKind.fup:
      p = putBytes(buf, p, IPC[rec.ipBytes]!);
      if (rec.ipBytes !== 0) { p = putBytes(buf, p, IP); p = putHex64(buf, p, rec.lo, rec.hi); buf[p++] = 34; }
      break;
    case PacketKind['tnt.8']: case PacketKind['tnt.64']: {
      p = putBytes(buf, p, N); p = putDec(buf, p, rec.n); p = putBytes(buf, p, BITS);
      // Oldest first: bit n-1 of hi:lo down to bit 0 (json.ts tntBits).
      const n = rec.n, lo = rec.lo >>> 0, hi = rec.hi >>> 0;
      for (let i = n - 1; i >= 32; i--) buf[p++] = 48 + ((hi >>> (i - 32)) & 1);
      for (let i = Math.min(n, 32) - 1; i >= 0; i--) buf[p++] = 48 + ((lo >>> i) & 1);
      buf[p++] = 34;
      break;
    }
    case PacketKind['mode.exec']: {
      p = putBytes(buf, p, CSL); p = putBytes(buf, p, rec.csl !== 0 ? TRUE : FALSE); p = putBytes(buf, p, CSD); p = putBytes(buf, p, rec.csd !== 0 ? TRUE : FALSE); p = putBytes(buf, p, MODE);
      p = putBytes(buf, p, MODES.get(execModeName(rec.csl, rec.csd))!);
      buf[p++] = 10;
      o.end(p);
      return;
    }
    case PacketKind.pip: p = putBytes(buf, p, CR3); p = putHex64(buf, p, rec.lo, rec.hi); p = putBytes(buf, p, NR); p = putBytes(buf, p, rec.nr !== 0 ? TRUE : FALSE); break;
    case PacketKind.cbr: p = putBytes(buf, p, RATIO); p = putDec(buf, p, rec.ratio); break;
    case PacketKind.tsc: p = putBytes(buf, p, TSC); p = putHex64(buf, p, rec.lo, rec.hi); buf[p++] = 34; break;
    case PacketKind.tma: p = putBytes(buf, p, CTC); p = putDec(buf, p, rec.ctc); p = putBytes(buf, p, FC); p = putDec(buf, p, rec.fc); break;
    case PacketKind.mtc: p = putBytes(buf, p, CTC); p = putDec(buf, p, rec.ctc); break;
    case PacketKind.cyc: p = putBytes(buf, p, VALUE); p = putHex64(buf, p, rec.lo, rec.hi); buf[p++] = 34; break;
    default: break; // pad, psb, psbend, ovf, stop: the head alone
  }
  buf[p++] = 125; // }
  buf[p++] = 10;
  o.end(p);
}
