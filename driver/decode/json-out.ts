// Packet JSON Lines written as bytes (ascii-out.ts): the same lines as packetJsonLine (json.ts)
// byte for byte — test/decode/json-out.test.ts checks it on arbitrary packets and bytes — for
// the packets a trace is made of; the rare kinds go through packetJsonLine itself.
import { Piece, putDec, putHex64, putPiece, type AsciiOut } from './ascii-out.js';
import { execModeName, packetJsonLine } from './json.js';
import { ERROR_NAMES, PacketKind, packetName, type PacketRecord } from './record.js';

const piece = (s: string): Piece => new Piece(s);
const OFF = piece('{"off":'), ERROR = piece(',"error":"'), END_STR = piece('"}');
const ERRORS = ERROR_NAMES.map(piece);
const IPC = ['suppressed', 'update-16', 'update-32', 'sext-48', 'update-48', 'invalid', 'full', 'invalid'].map((n) => piece(`,"ipc":"${n}"`));
const IP = piece(',"ip":"'), N = piece(',"n":'), BITS = piece(',"bits":"'), CSL = piece(',"csl":'), CSD = piece(',"csd":'), MODE = piece(',"mode":"');
const RATIO = piece(',"ratio":'), TSC = piece(',"tsc":"'), CTC = piece(',"ctc":'), FC = piece(',"fc":'), VALUE = piece(',"value":"');
const CR3 = piece(',"cr3":"'), NR = piece('","nr":'), TRUE = piece('true'), FALSE = piece('false');
const MODES = new Map(['16bit', '32bit', '64bit', 'unknown'].map((m) => [m, piece(`${m}"}`)]));

/** Kinds written here; the others (rare in traces) through packetJsonLine. */
const FAST = new Uint8Array(64);
for (const k of ['pad', 'psb', 'psbend', 'ovf', 'stop', 'tip', 'tip.pge', 'tip.pgd', 'fup', 'tnt.8', 'tnt.64', 'mode.exec', 'pip', 'cbr', 'tsc', 'tma', 'mtc', 'cyc'] as const) FAST[PacketKind[k]] = 1;

/** `,"size":N,"type":"NAME"` by `kind * 32 + size` for the kinds written here (sizes 1..31); one empty piece elsewhere. */
const NO_HEAD = piece('');
const HEADS: Piece[] = [];
for (let kind = 0; kind < FAST.length; kind++) {
  for (let size = 0; size < 32; size++) HEADS[kind * 32 + size] = FAST[kind] === 0 || size === 0 ? NO_HEAD : piece(`,"size":${size},"type":"${packetName(kind)}"`);
}

/**
 * Whole line ends, by payload, for the packets most lines are: TNT-8 (by bit count and bits) and
 * MTC (by CTC), one-byte CYC (by value), PAD, from `,"size"` to the newline.
 */
// Filled with undefined first (a packed array: V8 reads a holey one more slowly).
const TNT8_ENDS: (Piece | undefined)[] = Array.from({ length: 7 << 6 }, () => undefined);
for (let n = 1; n <= 6; n++) {
  for (let bits = 0; bits < 1 << n; bits++) TNT8_ENDS[(n << 6) | bits] = piece(`,"size":1,"type":"tnt.8","n":${n},"bits":"${bits.toString(2).padStart(n, '0')}"}\n`);
}
const MTC_ENDS = Array.from({ length: 256 }, (_, ctc) => piece(`,"size":2,"type":"mtc","ctc":${ctc}}\n`));
/** PAD's whole line end (a fuzzer's capture is half PAD by packet count). */
const PAD_END = piece(',"size":1,"type":"pad"}\n');
/** One-byte CYC by value (5 bits). */
const CYC1_ENDS = Array.from({ length: 32 }, (_, v) => piece(`,"size":1,"type":"cyc","value":"0x${v.toString(16)}"}\n`));

/** The longest line written here: a TNT-64 (47 bits) or an IP packet with a full IP, with room to spare. */
const MAX_LINE = 160;

const K_ERROR = PacketKind.error, K_TNT8 = PacketKind['tnt.8'], K_MTC = PacketKind.mtc, K_CYC = PacketKind.cyc, K_PAD = PacketKind.pad;

/** Writes the packet JSON line of `rec` (with its newline) to `o`. */
export function writePacketJson(o: AsciiOut, rec: PacketRecord): void {
  const kind = rec.kind;
  // Most lines are an offset and a whole ending (small functions: V8 inlines them here).
  const ending = kind === K_TNT8 ? (rec.n <= 6 ? TNT8_ENDS[(rec.n << 6) | (rec.lo & ((1 << rec.n) - 1))] : undefined)
    : kind === K_MTC ? (rec.size === 2 ? MTC_ENDS[rec.ctc & 0xff] : undefined)
    : kind === K_CYC && rec.size === 1 ? CYC1_ENDS[rec.lo & 31]
    : kind === K_PAD ? PAD_END : undefined;
  if (ending !== undefined) writeEnding(o, rec.offset, ending);
  else if (kind === K_ERROR) writeError(o, rec);
  else if (FAST[kind] === 0 || rec.size >= 32) o.line(packetJsonLine(rec));
  else writeFields(o, rec, kind);
}

/** `{"off":N` and a whole line ending. */
function writeEnding(o: AsciiOut, offset: number, ending: Piece): void {
  let p = o.begin(MAX_LINE);
  p = putPiece(o.view, p, OFF); p = putDec(o.buffer, p, offset); p = putPiece(o.view, p, ending);
  o.end(p);
}

/** A decode error's line. */
function writeError(o: AsciiOut, rec: PacketRecord): void {
  let p = o.begin(MAX_LINE);
  const buf = o.buffer, dv = o.view;
  p = putPiece(dv, p, OFF); p = putDec(buf, p, rec.offset); p = putPiece(dv, p, ERROR); p = putPiece(dv, p, ERRORS[rec.error]!); p = putPiece(dv, p, END_STR);
  buf[p++] = 10;
  o.end(p);
}

/** The other lines of the kinds written here: offset, size and type, then the kind's fields. */
function writeFields(o: AsciiOut, rec: PacketRecord, kind: number): void {
  let p = o.begin(MAX_LINE);
  const buf = o.buffer, dv = o.view;
  p = putPiece(dv, p, OFF); p = putDec(buf, p, rec.offset); p = putPiece(dv, p, HEADS[kind * 32 + rec.size]!);
  switch (kind) {
    case PacketKind.tip: case PacketKind['tip.pge']: case PacketKind['tip.pgd']: case PacketKind.fup:
      p = putPiece(dv, p, IPC[rec.ipBytes]!);
      if (rec.ipBytes !== 0) { p = putPiece(dv, p, IP); p = putHex64(buf, p, rec.lo, rec.hi); buf[p++] = 34; }
      break;
    case PacketKind['tnt.8']: case PacketKind['tnt.64']: {
      p = putPiece(dv, p, N); p = putDec(buf, p, rec.n); p = putPiece(dv, p, BITS);
      // Oldest first: bit n-1 of hi:lo down to bit 0 (json.ts tntBits).
      const n = rec.n, lo = rec.lo >>> 0, hi = rec.hi >>> 0;
      for (let i = n - 1; i >= 32; i--) buf[p++] = 48 + ((hi >>> (i - 32)) & 1);
      for (let i = Math.min(n, 32) - 1; i >= 0; i--) buf[p++] = 48 + ((lo >>> i) & 1);
      buf[p++] = 34;
      break;
    }
    case PacketKind['mode.exec']: {
      p = putPiece(dv, p, CSL); p = putPiece(dv, p, rec.csl !== 0 ? TRUE : FALSE); p = putPiece(dv, p, CSD); p = putPiece(dv, p, rec.csd !== 0 ? TRUE : FALSE); p = putPiece(dv, p, MODE);
      p = putPiece(dv, p, MODES.get(execModeName(rec.csl, rec.csd))!);
      buf[p++] = 10;
      o.end(p);
      return;
    }
    case PacketKind.pip: p = putPiece(dv, p, CR3); p = putHex64(buf, p, rec.lo, rec.hi); p = putPiece(dv, p, NR); p = putPiece(dv, p, rec.nr !== 0 ? TRUE : FALSE); break;
    case PacketKind.cbr: p = putPiece(dv, p, RATIO); p = putDec(buf, p, rec.ratio); break;
    case PacketKind.tsc: p = putPiece(dv, p, TSC); p = putHex64(buf, p, rec.lo, rec.hi); buf[p++] = 34; break;
    case PacketKind.tma: p = putPiece(dv, p, CTC); p = putDec(buf, p, rec.ctc); p = putPiece(dv, p, FC); p = putDec(buf, p, rec.fc); break;
    case PacketKind.mtc: p = putPiece(dv, p, CTC); p = putDec(buf, p, rec.ctc); break;
    case PacketKind.cyc: p = putPiece(dv, p, VALUE); p = putHex64(buf, p, rec.lo, rec.hi); buf[p++] = 34; break;
    default: break; // pad, psb, psbend, ovf, stop: the head alone
  }
  buf[p++] = 125; // }
  buf[p++] = 10;
  o.end(p);
}
