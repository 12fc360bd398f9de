// Packet JSON Lines written as bytes (ascii-out.ts): the same lines as packetJsonLine (json.ts)
// byte for byte — test/decode/json-out.test.ts checks it on arbitrary packets and bytes — for
// the packets a trace is made of; the rare kinds go through packetJsonLine itself.
import { ascii, AsciiOut } from './ascii-out.js';
import { execModeName, packetJsonLine } from './json.js';
import { ERROR_NAMES, PacketKind, packetName, type PacketRecord } from './record.js';

const OFF = ascii('{"off":'), SIZE = ascii(',"size":'), ERROR = ascii(',"error":"'), END_STR = ascii('"}');
const TYPE: Uint8Array[] = [];
for (let k = 1; k <= 32; k++) TYPE[k] = ascii(`,"type":"${packetName(k)}"`);
const ERRORS = ERROR_NAMES.map(ascii);
const IPC = ['suppressed', 'update-16', 'update-32', 'sext-48', 'update-48', 'invalid', 'full', 'invalid'].map((n) => ascii(`,"ipc":"${n}"`));
const IP = ascii(',"ip":"'), N = ascii(',"n":'), BITS = ascii(',"bits":"'), CSL = ascii(',"csl":'), CSD = ascii(',"csd":'), MODE = ascii(',"mode":"');
const RATIO = ascii(',"ratio":'), TSC = ascii(',"tsc":"'), CTC = ascii(',"ctc":'), FC = ascii(',"fc":'), VALUE = ascii(',"value":"');
const CR3 = ascii(',"cr3":"'), NR = ascii('","nr":'), TRUE = ascii('true'), FALSE = ascii('false');
const MODES = ['16bit', '32bit', '64bit', 'unknown'].map((m) => ascii(`${m}"}`));

/** Kinds written here; the others (rare in traces) through packetJsonLine. */
const FAST = new Uint8Array(64);
for (const k of ['pad', 'psb', 'psbend', 'ovf', 'stop', 'tip', 'tip.pge', 'tip.pgd', 'fup', 'tnt.8', 'tnt.64', 'mode.exec', 'pip', 'cbr', 'tsc', 'tma', 'mtc', 'cyc'] as const) FAST[PacketKind[k]] = 1;

/** Writes the packet JSON line of `rec` (with its newline) to `o`. */
export function writePacketJson(o: AsciiOut, rec: PacketRecord): void {
  const kind = rec.kind;
  if (kind === PacketKind.error) {
    o.bytes(OFF); o.dec(rec.offset); o.bytes(ERROR); o.bytes(ERRORS[rec.error]!); o.bytes(END_STR); o.newline();
    return;
  }
  if (FAST[kind] === 0) { o.str(packetJsonLine(rec)); o.newline(); return; }
  o.bytes(OFF); o.dec(rec.offset); o.bytes(SIZE); o.dec(rec.size); o.bytes(TYPE[kind]!);
  switch (kind) {
    case PacketKind.tip: case PacketKind['tip.pge']: case PacketKind['tip.pgd']: case PacketKind.fup:
      o.bytes(IPC[rec.ipBytes]!);
      if (rec.ipBytes !== 0) { o.bytes(IP); o.hex64(rec.lo, rec.hi); o.byte(34); }
      break;
    case PacketKind['tnt.8']: case PacketKind['tnt.64']: {
      o.bytes(N); o.dec(rec.n); o.bytes(BITS);
      // Oldest first: bit n-1 of hi:lo down to bit 0 (json.ts tntBits).
      const n = rec.n, lo = rec.lo >>> 0, hi = rec.hi >>> 0;
      for (let i = n - 1; i >= 32; i--) o.byte(48 + ((hi >>> (i - 32)) & 1));
      for (let i = Math.min(n, 32) - 1; i >= 0; i--) o.byte(48 + ((lo >>> i) & 1));
      o.byte(34);
      break;
    }
    case PacketKind['mode.exec']: {
      o.bytes(CSL); o.bytes(rec.csl !== 0 ? TRUE : FALSE); o.bytes(CSD); o.bytes(rec.csd !== 0 ? TRUE : FALSE); o.bytes(MODE);
      const name = execModeName(rec.csl, rec.csd);
      o.bytes(MODES[name === '16bit' ? 0 : name === '32bit' ? 1 : name === '64bit' ? 2 : 3]!);
      o.newline();
      return;
    }
    case PacketKind.pip: o.bytes(CR3); o.hex64(rec.lo, rec.hi); o.bytes(NR); o.bytes(rec.nr !== 0 ? TRUE : FALSE); break;
    case PacketKind.cbr: o.bytes(RATIO); o.dec(rec.ratio); break;
    case PacketKind.tsc: o.bytes(TSC); o.hex64(rec.lo, rec.hi); o.byte(34); break;
    case PacketKind.tma: o.bytes(CTC); o.dec(rec.ctc); o.bytes(FC); o.dec(rec.fc); break;
    case PacketKind.mtc: o.bytes(CTC); o.dec(rec.ctc); break;
    case PacketKind.cyc: o.bytes(VALUE); o.hex64(rec.lo, rec.hi); o.byte(34); break;
    default: break; // pad, psb, psbend, ovf, stop: the head alone
  }
  o.byte(125); // }
  o.newline();
}
