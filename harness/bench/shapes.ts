// Trace shapes as users' captures have them, beside stream.ts's generator mix:
//
// - `fuzzer`: a capture of a KVM-based fuzzer (kAFL-like: PT in a guest, filtered to the target,
//   started and stopped at every input). By packet count about 56% PAD in long zero runs, 27%
//   TNT-8, 8% TIP, 4% TIP.PGE/TIP.PGD, 1% PIP, 0.8% PSB, each PSB+ with MODE.TSX, VMCS and CBR
//   (a VMX guest), and no timing packets but CBR.
// - `perf`: a `perf record -e intel_pt/cyc/` capture: CYC before most packets (CYCEn with a
//   threshold of 0, docs/sdm/packets.md §3.11), MTC every few packets, TSC and TMA at each PSB+.
//
// Both are packet streams for `dump`; `padded` reshapes a real trace (one flow can decode against
// its image) the fuzzer's way: PAD runs between packets and the VMX packets in each PSB+, neither
// of which changes the path (PAD is ignored; PIP/VMCS/MODE.TSX in PSB+ state what already holds).
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { PacketWriter } from '../../driver/decode/encode.js';
import type { IpCompression, Packet } from '../../driver/decode/packet.js';
import { PacketKind, toPacket } from '../../driver/decode/record.js';
import { BENCH_PSB_PERIOD, benchStream } from './stream.js';
import { Prng } from './prng.js';

/** The shapes a benchmark runs on: stream.ts's generator mix and the two above. */
export const TRACE_SHAPES = ['generator', 'fuzzer', 'perf'] as const;
export type TraceShape = (typeof TRACE_SHAPES)[number];

/**
 * A PAD run after a packet: its probability and the largest run (uniform from 1: mean about 48).
 * 1.4 PAD packets per other packet on average: 56% of them all.
 */
const PAD_RUN_CHANCE = 0.03, PAD_RUN_MAX = 96;

/** The fuzzer's PSB+: a VMX guest's between two inputs (no FUP: tracing is off), with no timing packets. */
function fuzzerPsb(w: PacketWriter): void {
  w.push({ type: 'psb' });
  w.push({ type: 'mode.tsx', intx: false, abrt: false });
  w.push({ type: 'vmcs', base: 0x1_2345_6000n });
  w.push({ type: 'cbr', ratio: 36 });
  w.push({ type: 'psbend' });
}

/** IP packets in one 64 KiB neighbourhood (a fuzz target's hot code): 16-bit updates mostly. */
function targetIp(r: Prng, ip: number): { next: number; ipc: IpCompression; raw: bigint } {
  const next = r.chance(0.9) ? (ip & ~0xffff) | r.below(0x10000) : 0x7f00_0000_0000 + r.below(0x1000_0000);
  const same16 = Math.floor(next / 0x10000) === Math.floor(ip / 0x10000);
  return { next, ipc: same16 ? 'update-16' : 'sext-48', raw: BigInt(same16 ? next & 0xffff : next) };
}

/**
 * A fuzzer-shaped stream of `size` bytes or a little more. Per 388 events: 270 TNT-8, 80 TIP, 20
 * TIP.PGD/TIP.PGE pairs, 10 PIP, 8 PSB+ (5 packets each), then PAD runs: by packet count 56% PAD,
 * 27% TNT-8, 8% TIP, 4% TIP.PGE/PGD, 1% PIP, 0.8% PSB.
 */
export function fuzzerStream(size: number, seed = 1): Uint8Array {
  const r = new Prng(seed);
  const w = new PacketWriter(size + 512);
  let ip = 0x5555_5555_1000;
  fuzzerPsb(w);
  while (w.length < size) {
    const roll = r.below(388);
    if (roll < 270) {
      w.push({ type: 'tnt.8', n: 6, bits: BigInt(r.below(64)) });
    } else if (roll < 350) {
      const t = targetIp(r, ip);
      ip = t.next;
      w.push({ type: 'tip', ipc: t.ipc, ip: t.raw });
    } else if (roll < 370) {
      // Leaving the filtered range and coming back (an input ends, the next starts).
      w.push({ type: 'tip.pgd', ipc: 'suppressed', ip: 0n });
      ip = targetIp(r, ip).next;
      w.push({ type: 'tip.pge', ipc: 'sext-48', ip: BigInt(ip) });
    } else if (roll < 380) {
      w.push({ type: 'pip', cr3: BigInt(0x1000 * (1 + r.below(0x100))), nr: true });
    } else {
      fuzzerPsb(w);
    }
    if (r.chance(PAD_RUN_CHANCE)) w.pad(1 + r.below(PAD_RUN_MAX));
  }
  return w.bytes();
}

/** A perf-shaped stream (timing on, CYC before most packets) of `size` bytes or a little more. */
export function perfStream(size: number, seed = 1): Uint8Array {
  const r = new Prng(seed);
  const w = new PacketWriter(size + 512);
  let ip = 0x5555_5555_1000, tsc = 0x10_0000_0000, ctc = 0, nextPsb = 0;
  while (w.length < size) {
    if (w.length >= nextPsb) {
      nextPsb += BENCH_PSB_PERIOD;
      tsc += 20_000 + r.below(20_000);
      w.push({ type: 'psb' });
      w.push({ type: 'tsc', tsc: BigInt(tsc) });
      w.push({ type: 'tma', ctc: ctc & 0xffff, fc: r.below(512) });
      w.push({ type: 'cbr', ratio: 24 + r.below(8) });
      w.push({ type: 'mode.exec', csl: true, csd: false, if: false });
      w.push({ type: 'fup', ipc: 'sext-48', ip: BigInt(ip) });
      w.push({ type: 'psbend' });
    }
    if (r.chance(0.75)) w.push({ type: 'cyc', value: BigInt(r.below(r.chance(0.85) ? 32 : 2048)) });
    const roll = r.below(1000);
    if (roll < 520) {
      const n = r.chance(0.6) ? 6 : 1 + r.below(6);
      w.push({ type: 'tnt.8', n, bits: BigInt(r.below(1 << n)) });
    } else if (roll < 700) {
      const t = targetIp(r, ip);
      ip = t.next;
      w.push({ type: 'tip', ipc: t.ipc, ip: t.raw });
    } else if (roll < 880) {
      ctc = (ctc + 1) & 0xffff;
      w.push({ type: 'mtc', ctc: ctc & 0xff });
    } else if (roll < 900) {
      tsc += r.below(50_000);
      w.push({ type: 'tsc', tsc: BigInt(tsc) });
      w.push({ type: 'tma', ctc: ctc & 0xffff, fc: r.below(512) });
    } else if (roll < 960) {
      w.push({ type: 'fup', ipc: 'update-16', ip: BigInt(ip & 0xffff) });
      const t = targetIp(r, ip);
      ip = t.next;
      w.push({ type: 'tip', ipc: t.ipc, ip: t.raw });
    } else if (roll < 975) {
      w.push({ type: 'pip', cr3: BigInt(0x1000 * (1 + r.below(0x1000))), nr: false });
    } else {
      w.push({ type: 'cbr', ratio: 24 + r.below(8) });
    }
  }
  return w.bytes();
}

/** The VMX packets a fuzzer's PSB+ adds (after PSB, before the rest). */
const VMX_PSB: readonly Packet[] = [
  { type: 'mode.tsx', intx: false, abrt: false }, { type: 'vmcs', base: 0x1_2345_6000n },
];

/**
 * `trace` reshaped the fuzzer's way (see the file comment): the same path for flow, in a stream
 * where PAD runs make up about half the packets. A decode error ends the copy.
 */
export function padded(trace: Uint8Array, seed = 1): Uint8Array {
  const r = new Prng(seed);
  const w = new PacketWriter(trace.length * 3 + 4096);
  const dec = new PacketDecoder(trace);
  const rec = dec.record;
  while (dec.next()) {
    if (rec.kind === PacketKind.error) break;
    w.push(toPacket(rec));
    if (rec.kind === PacketKind.psb) { for (const p of VMX_PSB) w.push(p); continue; }
    if (r.chance(PAD_RUN_CHANCE)) w.pad(1 + r.below(PAD_RUN_MAX));
  }
  return w.bytes();
}

/** A stream of `shape` for `dump`, of `size` bytes or a little more. */
export function shapedStream(shape: TraceShape, size: number, seed = 1): Uint8Array {
  return shape === 'fuzzer' ? fuzzerStream(size, seed) : shape === 'perf' ? perfStream(size, seed) : benchStream(size, seed);
}
