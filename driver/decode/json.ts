// Packet JSON Lines, exactly as docs/formats/packet-json.md: keys in the fixed order,
// wide values as lowercase `0x…` hex without leading zeros, error lines
// `{"off":N,"error":"NAME"}`.
//
// Packets newer than libipt 2.0.5 (their own types; fields named after the
// SDM / docs/sdm/packets.md §3.18–§3.20; keys after off, size, type):
//   bbp   "sz" (bool: BIPs carry 4-byte values), "block_type" (int, bits 4:0)
//   bip   "id" (int), "value" (hex; 4 or 8 bytes, the size says which)
//   bep   "ip" (bool: a FUP follows)
//   cfe   "ip" (bool), "cfe_type" (int, bits 4:0), "vector" (int)
//   evd   "evd_type" (int, bits 4:0), "payload" (hex, 64 bits)
//   trig  "ip", "icntv", "mult" (bools), "trbv" (int), "icnt" (int, 0 without ICNTV)
import { PacketDecoder } from './decoder.js';
import { ERROR_NAMES, PacketKind, packetName, type PacketRecord } from './record.js';

/** `0x…` lowercase hex of a 64-bit value given as uint32 halves, no leading zeros. */
export function hex64(lo: number, hi: number): string {
  if (hi === 0) return '0x' + (lo >>> 0).toString(16);
  return '0x' + (hi >>> 0).toString(16) + (lo >>> 0).toString(16).padStart(8, '0');
}

/** The TNT result string of packet-json: n chars, oldest branch first, `1` = taken. */
export function tntBits(n: number, lo: number, hi: number): string {
  if (n <= 32) return (lo >>> 0).toString(2).padStart(n, '0').slice(-n);
  return (hi >>> 0).toString(2).padStart(n - 32, '0') + (lo >>> 0).toString(2).padStart(32, '0');
}

/** packet-json's mode.exec `mode` string from CS.L and CS.D (docs/sdm/packets.md §3.5 table). */
export function execModeName(csl: number, csd: number): string {
  if (csl === 1) return csd === 1 ? 'unknown' : '64bit';
  return csd === 1 ? '32bit' : '16bit';
}

const IPC_NAMES = ['suppressed', 'update-16', 'update-32', 'sext-48', 'update-48', 'invalid', 'full', 'invalid'];
const bool = (v: number): string => (v !== 0 ? 'true' : 'false');

/** The JSON line (without newline) of one record (packet or error). */
export function packetJsonLine(rec: PacketRecord): string {
  if (rec.kind === PacketKind.error) return `{"off":${rec.offset},"error":"${ERROR_NAMES[rec.error]}"}`;
  const head = `{"off":${rec.offset},"size":${rec.size},"type":"${packetName(rec.kind)}"`;
  switch (rec.kind) {
    case PacketKind.tip: case PacketKind['tip.pge']: case PacketKind['tip.pgd']: case PacketKind.fup:
      return rec.ipBytes === 0
        ? `${head},"ipc":"suppressed"}`
        : `${head},"ipc":"${IPC_NAMES[rec.ipBytes]}","ip":"${hex64(rec.lo, rec.hi)}"}`;
    case PacketKind['tnt.8']: case PacketKind['tnt.64']:
      return `${head},"n":${rec.n},"bits":"${tntBits(rec.n, rec.lo, rec.hi)}"}`;
    case PacketKind['mode.exec']:
      return `${head},"csl":${bool(rec.csl)},"csd":${bool(rec.csd)},"mode":"${execModeName(rec.csl, rec.csd)}"}`;
    case PacketKind['mode.tsx']:
      return `${head},"intx":${bool(rec.intx)},"abrt":${bool(rec.abrt)}}`;
    case PacketKind.pip:
      return `${head},"cr3":"${hex64(rec.lo, rec.hi)}","nr":${bool(rec.nr)}}`;
    case PacketKind.vmcs:
      return `${head},"base":"${hex64(rec.lo, rec.hi)}"}`;
    case PacketKind.cbr:
      return `${head},"ratio":${rec.ratio}}`;
    case PacketKind.tsc:
      return `${head},"tsc":"${hex64(rec.lo, rec.hi)}"}`;
    case PacketKind.tma:
      return `${head},"ctc":${rec.ctc},"fc":${rec.fc}}`;
    case PacketKind.mtc:
      return `${head},"ctc":${rec.ctc}}`;
    case PacketKind.cyc:
      return `${head},"value":"${hex64(rec.lo, rec.hi)}"}`;
    case PacketKind.mnt:
      return `${head},"payload":"${hex64(rec.lo, rec.hi)}"}`;
    case PacketKind.exstop:
      return `${head},"ip":${bool(rec.ip)}}`;
    case PacketKind.mwait:
      return `${head},"hints":"${hex64(rec.lo, 0)}","ext":"${hex64(rec.hi, 0)}"}`;
    case PacketKind.pwre:
      return `${head},"state":${rec.state},"sub_state":${rec.subState},"hw":${bool(rec.hw)}}`;
    case PacketKind.pwrx:
      return `${head},"last":${rec.last},"deepest":${rec.deepest},"interrupt":${bool(rec.interrupt)},`
        + `"store":${bool(rec.store)},"autonomous":${bool(rec.autonomous)}}`;
    case PacketKind.ptw:
      return `${head},"plc":${rec.plc},"payload":"${hex64(rec.lo, rec.hi)}","ip":${bool(rec.ip)}}`;
    case PacketKind.bbp:
      return `${head},"sz":${bool(rec.sz)},"block_type":${rec.blockType}}`;
    case PacketKind.bip:
      return `${head},"id":${rec.id},"value":"${hex64(rec.lo, rec.hi)}"}`;
    case PacketKind.bep:
      return `${head},"ip":${bool(rec.ip)}}`;
    case PacketKind.cfe:
      return `${head},"ip":${bool(rec.ip)},"cfe_type":${rec.cfeType},"vector":${rec.vector}}`;
    case PacketKind.evd:
      return `${head},"evd_type":${rec.evdType},"payload":"${hex64(rec.lo, rec.hi)}"}`;
    case PacketKind.trig:
      return `${head},"ip":${bool(rec.ip)},"icntv":${bool(rec.icntv)},"mult":${bool(rec.mult)},`
        + `"trbv":${rec.trbv},"icnt":${rec.icnt}}`;
    default:
      // pad, psb, psbend, ovf, stop
      return `${head}}`;
  }
}

/** Decodes a whole buffer and writes one JSON line (no newline) per packet or error. */
export function dumpJson(buf: Uint8Array, write: (line: string) => void): void {
  const dec = new PacketDecoder(buf);
  const rec = dec.record;
  while (dec.next()) write(packetJsonLine(rec));
}
