// Shared helpers for the packet-layer tests.
import { PacketDecoder, type DecoderOptions } from '../../driver/decode/decoder.js';
import { packetJsonLine } from '../../driver/decode/json.js';
import { randomStream } from '../crosscheck/random-stream.js';

/** Bytes from a hex string like "02 A3 02 00". */
export function hex(s: string): number[] {
  return s.trim() === '' ? [] : s.trim().split(/\s+/).map((x) => Number.parseInt(x, 16));
}

/** PSB: `02 82` x 8 (docs/sdm/packets.md §3.14), written out by hand. */
export const PSB = hex('02 82 02 82 02 82 02 82 02 82 02 82 02 82 02 82');

/** All JSON lines of a one-shot decode. */
export function jsonLines(bytes: ArrayLike<number>, opts?: DecoderOptions): string[] {
  const dec = new PacketDecoder(Uint8Array.from(bytes), opts);
  const out: string[] = [];
  while (dec.next()) out.push(packetJsonLine(dec.record));
  return out;
}

/** All JSON lines of a chunked decode, split at `cuts` (sorted indices). */
export function chunkedJsonLines(bytes: Uint8Array, cuts: readonly number[]): string[] {
  const out: string[] = [];
  const ends = [...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length];
  let pending = new Uint8Array(0);
  let from = 0;
  let dec: PacketDecoder | undefined;
  for (let k = 0; k < ends.length; k++) {
    const end = ends[k]!;
    const final = k === ends.length - 1;
    const buf = new Uint8Array(pending.length + end - from);
    buf.set(pending, 0);
    buf.set(bytes.subarray(from, end), pending.length);
    from = end;
    if (dec === undefined) dec = new PacketDecoder(buf, { final });
    else dec.resume(buf, { final });
    while (dec.next()) out.push(packetJsonLine(dec.record));
    pending = buf.slice(dec.consumed);
  }
  return out;
}

/** A small deterministic PRNG (mulberry32) for seeded fuzzing. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A stream of `size` bytes with every packet type and no errors (test/crosscheck), plus `flips` bytes overwritten at random. */
export function damagedStream(seed: number, size: number, flips: number): Uint8Array {
  const s = randomStream(seed, size);
  const r = prng(seed);
  for (let k = 0; k < flips; k++) s[Math.floor(r() * s.length)] = Math.floor(r() * 256);
  return s;
}

