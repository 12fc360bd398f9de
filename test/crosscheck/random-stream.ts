// Corpus (b) of the cross-check: deterministic random streams written by OUR
// encoder (driver/decode/encode.ts), covering every packet type libipt 2.0.5
// knows and every IP compression, with random payloads. Packet-level only:
// the streams follow no control-flow rules.
import { PacketWriter } from '../../driver/decode/encode.js';
import type { IpCompression, Packet } from '../../driver/decode/packet.js';
import { Prng } from '../../harness/bench/prng.js';

const IPCS: readonly { ipc: IpCompression; bits: number }[] = [
  { ipc: 'suppressed', bits: 0 },
  { ipc: 'update-16', bits: 16 },
  { ipc: 'update-32', bits: 32 },
  { ipc: 'sext-48', bits: 48 },
  { ipc: 'update-48', bits: 48 },
  { ipc: 'full', bits: 64 },
];

const IP_TYPES = ['tip', 'tip.pge', 'tip.pgd', 'fup'] as const;

/** Every packet type libipt 2.0.5 knows (docs/sdm/packets.md §1 without the [new] ones). */
export const LIBIPT_KNOWN_TYPES = [
  'pad', 'psb', 'psbend', 'ovf', 'stop', 'tip', 'tip.pge', 'tip.pgd', 'fup', 'tnt.8', 'tnt.64',
  'mode.exec', 'mode.tsx', 'pip', 'vmcs', 'cbr', 'tsc', 'tma', 'mtc', 'cyc', 'mnt', 'exstop',
  'mwait', 'pwre', 'pwrx', 'ptw',
] as const;

/** A random IP packet of the given type with a random compression and a payload that fits it (spec §5). */
export function randomIpPacket(r: Prng, type: (typeof IP_TYPES)[number]): Packet {
  const { ipc, bits } = r.pick(IPCS);
  return { type, ipc, ip: r.bits(bits) };
}

/** One random packet of a libipt-known type, with payloads inside each field's width. */
export function randomPacket(r: Prng): Packet {
  const type = r.pick(LIBIPT_KNOWN_TYPES);
  switch (type) {
    case 'pad': case 'psb': case 'psbend': case 'ovf': case 'stop':
      return { type };
    case 'tip': case 'tip.pge': case 'tip.pgd': case 'fup':
      return randomIpPacket(r, type);
    case 'tnt.8': case 'tnt.64': {
      const n = 1 + r.below(type === 'tnt.8' ? 6 : 47); // spec §3.2: 1-6 / 1-47 results
      return { type, n, bits: r.bits(n) };
    }
    case 'mode.exec':
      return { type, csl: r.chance(0.5), csd: r.chance(0.5), if: r.chance(0.5) };
    case 'mode.tsx':
      return { type, intx: r.chance(0.5), abrt: r.chance(0.5) };
    case 'pip': // CR3[51:5] (spec §3.4)
      return { type, cr3: r.bits(52) & ~0x1fn, nr: r.chance(0.5) };
    case 'vmcs': // bits 51:12 (spec §3.12)
      return { type, base: r.bits(52) & ~0xfffn };
    case 'cbr':
      return { type, ratio: r.below(256) };
    case 'tsc':
      return { type, tsc: r.wide(56) };
    case 'tma':
      return { type, ctc: r.below(0x10000), fc: r.below(0x200) };
    case 'mtc':
      return { type, ctc: r.below(256) };
    case 'cyc': // at most 9 bytes: below 2^61 (spec §3.11)
      return { type, value: r.wide(61) };
    case 'mnt':
      return { type, payload: r.bits(64) };
    case 'exstop':
      return { type, ip: r.chance(0.5) };
    case 'mwait':
      return { type, hints: r.u32(), ext: r.u32() };
    case 'pwre':
      return { type, state: r.below(16), sub_state: r.below(16), hw: r.chance(0.5) };
    case 'pwrx':
      return {
        type, last: r.below(16), deepest: r.below(16),
        interrupt: r.chance(0.5), store: r.chance(0.5), autonomous: r.chance(0.5),
      };
    case 'ptw': {
      const plc = r.below(2);
      return { type, plc, payload: r.bits(plc === 0 ? 32 : 64), ip: r.chance(0.5) };
    }
  }
}

/** PSB+ (docs/sdm/packets.md §8, reference-model order), optional parts chosen at random. */
export function pushPsbPlus(w: PacketWriter, r: Prng): void {
  w.push({ type: 'psb' });
  if (r.chance(0.5)) {
    w.push({ type: 'tsc', tsc: r.wide(56) });
    w.push({ type: 'tma', ctc: r.below(0x10000), fc: r.below(0x200) });
  }
  if (r.chance(0.5)) w.push({ type: 'pip', cr3: r.bits(52) & ~0x1fn, nr: false });
  w.push({ type: 'cbr', ratio: r.below(256) });
  if (r.chance(0.5)) {
    w.push({ type: 'mode.exec', csl: true, csd: false, if: false });
    w.push(randomIpPacket(r, 'fup'));
  }
  w.push({ type: 'psbend' });
}

/** The corpus stream for `seed`: PSB+, then random packets with a PSB+ every 256-1023 bytes, about `size` bytes. */
export function randomStream(seed: number, size = 4096): Uint8Array {
  const r = new Prng(seed);
  const w = new PacketWriter(size + 64);
  pushPsbPlus(w, r);
  let nextPsb = 256 + r.below(768);
  while (w.length < size) {
    if (w.length >= nextPsb) {
      pushPsbPlus(w, r);
      nextPsb = w.length + 256 + r.below(768);
    } else {
      w.push(randomPacket(r));
    }
  }
  return w.bytes();
}
