/**
 * Packet checksum, bit for bit the same as the C twin over libipt's decoded
 * packets (test/libipt/ptbench.c):
 *
 * FNV-1a over 32-bit words: start `h = 0x811c9dc5`; `mix(w)`:
 * `h = Math.imul(h ^ (w >>> 0), 0x01000193) >>> 0`. For each packet:
 * mix(kind code of PacketKind), mix(size), then the packet's fields in
 * docs/formats/packet-json.md key order: booleans → 0/1; small ints → the value;
 * 64-bit values (ip, tsc, cr3, base, cyc value, mnt payload, ptw payload) →
 * mix(lo32) then mix(hi32); `ipc` → the IPBytes number (0,1,2,3,4,6) and `ip`
 * omitted when suppressed; TNT → mix(n), then the result bits value (oldest =
 * bit n-1) as lo32, hi32; mode.exec → csl, csd (not the mode string);
 * mwait → hints, ext; pip → cr3 lo32, hi32, then nr; tma → ctc, fc;
 * pwre → state, sub_state, hw; pwrx → last, deepest, interrupt, store,
 * autonomous. Packets unknown to libipt (bbp…trig) and errors: mix(kind),
 * mix(size) only (an error record has size 0).
 */
import type { PacketBatch } from './batch.js';
import { PacketKind, type PacketRecord } from './record.js';

/** The FNV-1a start value. */
export const CHECKSUM_INIT = 0x811c9dc5;

/** Mixes one 32-bit word into `h`. */
export function mix(h: number, w: number): number {
  return Math.imul(h ^ (w >>> 0), 0x01000193) >>> 0;
}

const P = 0x01000193;

/** mix() without the final `>>> 0` (int32, same low 32 bits). */
function mixi(h: number, w: number): number {
  return Math.imul(h ^ w, P);
}

/** Mixes one decoded packet (or error record) into `h` (algorithm above). */
export function checksumRecord(h: number, rec: PacketRecord): number {
  // TNT-8 and CYC inline, the rest in checksumFields(): small enough for V8
  // to inline into the caller's loop. (`h ^ w` is the same bits as `h ^ (w >>> 0)`.)
  const k = rec.kind;
  h = Math.imul(Math.imul(h ^ k, P) ^ rec.size, P);
  if (k === PacketKind['tnt.8']) h = Math.imul(h ^ rec.n, P);
  else if (k !== PacketKind.cyc) return checksumFields(h, rec) >>> 0;
  return Math.imul(Math.imul(h ^ rec.lo, P) ^ rec.hi, P) >>> 0;
}

/** The fields of the less frequent kinds (after kind and size); works on int32 (no boxing of the result). */
function checksumFields(h: number, rec: PacketRecord): number {
  switch (rec.kind) {
    case PacketKind.tip: case PacketKind['tip.pge']: case PacketKind['tip.pgd']: case PacketKind.fup:
      h = mixi(h, rec.ipBytes);
      return rec.ipBytes === 0 ? h : mixi(mixi(h, rec.lo), rec.hi);
    case PacketKind['tnt.8']: case PacketKind['tnt.64']:
      return mixi(mixi(mixi(h, rec.n), rec.lo), rec.hi);
    case PacketKind['mode.exec']:
      return mixi(mixi(h, rec.csl), rec.csd);
    case PacketKind['mode.tsx']:
      return mixi(mixi(h, rec.intx), rec.abrt);
    case PacketKind.pip:
      return mixi(mixi(mixi(h, rec.lo), rec.hi), rec.nr);
    case PacketKind.vmcs: case PacketKind.tsc: case PacketKind.cyc: case PacketKind.mnt:
      return mixi(mixi(h, rec.lo), rec.hi);
    case PacketKind.cbr:
      return mixi(h, rec.ratio);
    case PacketKind.tma:
      return mixi(mixi(h, rec.ctc), rec.fc);
    case PacketKind.mtc:
      return mixi(h, rec.ctc);
    case PacketKind.exstop:
      return mixi(h, rec.ip);
    case PacketKind.mwait:
      return mixi(mixi(h, rec.lo), rec.hi);
    case PacketKind.pwre:
      return mixi(mixi(mixi(h, rec.state), rec.subState), rec.hw);
    case PacketKind.pwrx:
      return mixi(mixi(mixi(mixi(mixi(h, rec.last), rec.deepest), rec.interrupt), rec.store), rec.autonomous);
    case PacketKind.ptw:
      return mixi(mixi(mixi(mixi(h, rec.plc), rec.lo), rec.hi), rec.ip);
    default:
      // pad, psb, psbend, ovf, stop; bbp…trig; errors.
      return h;
  }
}

/** Mixes slots [from, to) of a PacketBatch into `h` (the same algorithm over the batch columns). */
export function checksumBatch(h: number, batch: PacketBatch, from = 0, to = batch.count): number {
  let x = h | 0;
  for (let j = from; j < to; j++) x = mixSlot(x, batch, j);
  return x >>> 0;
}

/** Mixes slot `j` of `batch` into `h`; int32 in, int32 out (decodeBatch's checksum for the packets off its hot path). */
export function mixSlot(h: number, batch: PacketBatch, j: number): number {
  const k = batch.kind[j]!;
  h = mixi(mixi(h, k), batch.size[j]!);
  const a = batch.a[j]!;
  switch (k) {
    case PacketKind['tnt.8']: case PacketKind['tnt.64']:
      return mixi(mixi(mixi(h, a), batch.lo[j]!), batch.hi[j]!);
    case PacketKind.tip: case PacketKind['tip.pge']: case PacketKind['tip.pgd']: case PacketKind.fup:
      h = mixi(h, a);
      return a === 0 ? h : mixi(mixi(h, batch.lo[j]!), batch.hi[j]!);
    case PacketKind.vmcs: case PacketKind.tsc: case PacketKind.cyc: case PacketKind.mnt: case PacketKind.mwait:
      return mixi(mixi(h, batch.lo[j]!), batch.hi[j]!);
    case PacketKind.pip:
      return mixi(mixi(mixi(h, batch.lo[j]!), batch.hi[j]!), a);
    case PacketKind.cbr: case PacketKind.mtc: case PacketKind.exstop:
      return mixi(h, a);
    // batch.ts layout of the packed `a` values below.
    case PacketKind['mode.exec']: case PacketKind['mode.tsx']:
      return mixi(mixi(h, a & 1), (a >>> 1) & 1);
    case PacketKind.tma:
      return mixi(mixi(h, a & 0xffff), a >>> 16);
    case PacketKind.pwre:
      return mixi(mixi(mixi(h, a & 0xf), (a >>> 4) & 0xf), (a >>> 8) & 1);
    case PacketKind.pwrx:
      return mixi(mixi(mixi(mixi(mixi(h, a & 0xf), (a >>> 4) & 0xf), (a >>> 8) & 1), (a >>> 9) & 1), (a >>> 10) & 1);
    case PacketKind.ptw:
      return mixi(mixi(mixi(mixi(h, a & 3), batch.lo[j]!), batch.hi[j]!), (a >>> 2) & 1);
    default:
      // pad, psb, psbend, ovf, stop; bbp…trig; errors.
      return h;
  }
}
