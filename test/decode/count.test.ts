// PacketDecoder.countPackets() (the `dump --stats` path, hot-loop.ts hotCount) against next(): the
// same counts by kind and the same errors at the same offsets, on clean and damaged streams,
// arbitrary packets followed by junk, and input cut into chunks.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { encodePackets } from '../../driver/decode/encode.js';
import { PacketKind } from '../../driver/decode/record.js';
import { anyPacket } from './arbitrary.js';
import { damagedStream } from './helpers.js';

interface Tally { readonly counts: number[]; readonly errors: string[] }

/** Counts by kind and `code@offset` of each error, from next(). */
function byNext(bytes: Uint8Array): Tally {
  const counts = new Array<number>(64).fill(0), errors: string[] = [];
  const dec = new PacketDecoder(bytes);
  while (dec.next()) {
    counts[dec.record.kind]!++;
    if (dec.record.kind === PacketKind.error) errors.push(`${dec.record.error}@${dec.record.offset}`);
  }
  return { counts, errors };
}

/** The same from countPackets(), the input handed over in pieces cut at `cuts`. */
function byCount(bytes: Uint8Array, cuts: readonly number[] = []): Tally {
  const counts = new Float64Array(64), errors: string[] = [];
  const onError = (code: number, offset: number): void => { errors.push(`${code}@${offset}`); };
  let dec: PacketDecoder | undefined;
  let pending = new Uint8Array(0);
  let from = 0;
  for (const end of [...cuts, bytes.length]) {
    const final = end === bytes.length;
    const buf = new Uint8Array([...pending, ...bytes.subarray(from, end)]);
    from = end;
    if (dec === undefined) dec = new PacketDecoder(buf, { final });
    else dec.resume(buf, { final });
    dec.countPackets(counts, onError);
    pending = buf.slice(dec.consumed);
  }
  return { counts: [...counts], errors };
}

describe('PacketDecoder.countPackets', () => {
  test.for([
    { seed: 1, flips: 0 },
    { seed: 2, flips: 20 },
    { seed: 3, flips: 300 },
  ])('counts what next() decodes (seed $seed, $flips flipped bytes)', ({ seed, flips }) => {
    const bytes = damagedStream(seed, 48 << 10, flips);
    const want = byNext(bytes);
    expect(want.counts.filter((n) => n > 0).length).toBeGreaterThan(10);
    if (flips > 0) expect(want.errors.length).toBeGreaterThan(0);
    expect(byCount(bytes)).toEqual(want);
  });

  test('chunked input gives the one-shot counts', () => {
    const bytes = damagedStream(4, 32 << 10, 40);
    expect(byCount(bytes, [1, 2, 1000, 1009, 20_000])).toEqual(byNext(bytes));
  });

  test('arbitrary packets followed by junk', () => {
    fc.assert(fc.property(fc.array(anyPacket, { maxLength: 60 }), fc.uint8Array({ maxLength: 48 }), (packets, junk) => {
      const bytes = new Uint8Array([...encodePackets(packets), ...junk]);
      expect(byCount(bytes)).toEqual(byNext(bytes));
    }), { numRuns: 300 });
  });

  test('refuses a counts array too short for every packet kind', () => {
    expect(() => new PacketDecoder(new Uint8Array(0)).countPackets(new Float64Array(8), () => undefined)).toThrow(RangeError);
  });
});
