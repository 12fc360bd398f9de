// The benchmark's trace: a deterministic stream with a realistic packet mix
// (TNT-heavy; TIP/FUP compressed against a tracked LastIP with the reference
// encoder policy of docs/sdm/packets.md §5; timing packets TSC/TMA/MTC/CYC/CBR;
// a PSB+ about every 4 KiB as with PSBFreq=1, docs/sdm/packets.md §8).
import { PacketWriter } from '../../driver/decode/encode.js';
import type { IpCompression } from '../../driver/decode/packet.js';
import { Prng } from './prng.js';

/** Bytes between PSB+ (PSB period 4 KiB: docs/sdm/packets.md §8, "2K << PSBFreq"). */
export const BENCH_PSB_PERIOD = 4096;

const MASK16 = 0xffff;
const TWO32 = 0x1_0000_0000;
const TWO48 = 0x1_0000_0000_0000;

/** Tracks LastIP and picks IPBytes as the model's encoder policy does (docs/sdm/packets.md §5). */
class IpCompressor {
  last = 0; // IPs are canonical user-space addresses below 2^47: exact as numbers.

  /** The compression and raw payload for `ip`, updating LastIP. */
  compress(ip: number): { ipc: IpCompression; ip: bigint } {
    const last = this.last;
    this.last = ip;
    if (Math.floor(ip / 0x10000) === Math.floor(last / 0x10000)) return { ipc: 'update-16', ip: BigInt(ip & MASK16) };
    if (Math.floor(ip / TWO32) === Math.floor(last / TWO32)) return { ipc: 'update-32', ip: BigInt(ip % TWO32) };
    return { ipc: 'sext-48', ip: BigInt(ip % TWO48) }; // canonical-48
  }
}

/** A code layout: a few hot functions in one module, some in a shared library far away. */
function nextTarget(r: Prng, current: number): number {
  const roll = r.below(100);
  if (roll < 70) return current - 0x800 + r.below(0x1000); // same function neighbourhood
  if (roll < 92) return 0x5555_5555_0000 + r.below(0x40_0000); // the executable
  if (roll < 99) return 0x7f12_3456_0000 + r.below(0x100_0000); // a shared library
  return 0x7ffd_0000_0000 + r.below(0x1_0000_0000); // vdso / JIT: needs 48 bits
}

/** A deterministic stream of `size` bytes or a little more (it ends on a packet boundary). */
export function benchStream(size: number, seed = 1): Uint8Array {
  const r = new Prng(seed);
  const w = new PacketWriter(size + 256);
  const ipc = new IpCompressor();
  let ip = 0x5555_5555_1000;
  let tsc = 0x1_0000_0000;
  let ctc = 0;
  let nextPsb = 0;

  while (w.length < size) {
    if (w.length >= nextPsb) {
      // PSB+ resets LastIP (spec §5), so its FUP is compressed against 0.
      nextPsb += BENCH_PSB_PERIOD;
      ipc.last = 0;
      tsc += 5000 + r.below(5000);
      w.push({ type: 'psb' });
      w.push({ type: 'tsc', tsc: BigInt(tsc) });
      w.push({ type: 'tma', ctc: ctc & 0xffff, fc: r.below(512) });
      w.push({ type: 'pip', cr3: 0x1_2345_6000n, nr: false });
      w.push({ type: 'cbr', ratio: 36 });
      w.push({ type: 'mode.exec', csl: true, csd: false, if: false });
      w.push({ type: 'fup', ...ipc.compress(ip) });
      w.push({ type: 'psbend' });
      continue;
    }
    const roll = r.below(1000);
    if (roll < 560) {
      if (r.chance(0.25)) w.push({ type: 'cyc', value: BigInt(r.below(r.chance(0.8) ? 32 : 4096)) });
      const n = r.chance(0.7) ? 6 : 1 + r.below(6);
      w.push({ type: 'tnt.8', n, bits: BigInt(r.below(1 << n)) });
    } else if (roll < 590) {
      const n = 7 + r.below(41);
      w.push({ type: 'tnt.64', n, bits: r.bits(n) });
    } else if (roll < 760) {
      ip = nextTarget(r, ip);
      if (r.chance(0.2)) w.push({ type: 'cyc', value: BigInt(r.below(64)) });
      w.push({ type: 'tip', ...ipc.compress(ip) });
    } else if (roll < 800) {
      // An interrupt: FUP(source), TIP(handler) (docs/sdm/packets.md §10).
      w.push({ type: 'fup', ...ipc.compress(ip + r.below(64)) });
      ip = 0x5555_5555_0000 + r.below(0x1000);
      w.push({ type: 'tip', ...ipc.compress(ip) });
    } else if (roll < 880) {
      ctc = (ctc + 1) & 0xffff;
      w.push({ type: 'mtc', ctc: ctc & 0xff });
    } else if (roll < 940) {
      w.push({ type: 'cyc', value: BigInt(r.below(r.chance(0.9) ? 256 : 1 << 20)) });
    } else if (roll < 955) {
      tsc += r.below(100_000);
      w.push({ type: 'tsc', tsc: BigInt(tsc) });
      w.push({ type: 'tma', ctc: ctc & 0xffff, fc: r.below(512) });
    } else if (roll < 962) {
      w.push({ type: 'cbr', ratio: 20 + r.below(30) });
    } else if (roll < 975) {
      w.push({ type: 'pad' });
    } else if (roll < 990) {
      // Leaving and re-entering traced code: TIP.PGD(), MODE.Exec, TIP.PGE(target).
      w.push({ type: 'tip.pgd', ipc: 'suppressed', ip: 0n });
      ip = nextTarget(r, ip);
      w.push({ type: 'mode.exec', csl: true, csd: false, if: false });
      w.push({ type: 'tip.pge', ...ipc.compress(ip) });
    } else {
      w.push({ type: 'pip', cr3: BigInt(0x1000 * (1 + r.below(0x10000))), nr: false });
    }
  }
  return w.bytes();
}
