// Seeded fuzzing of the decoder: random packet streams, mutated and truncated.
// Never throws, never hangs, error offsets inside the buffer and increasing,
// sizes consistent; chunked decoding (final:false + resume) gives exactly the
// one-shot records for random chunk boundaries.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { PacketWriter } from '../../driver/decode/encode.js';
import { anyPacket } from './arbitrary.js';
import { chunkedJsonLines, jsonLines, prng } from './helpers.js';

/** A deterministic mutated stream for `seed`. */
function stream(seed: number): Uint8Array {
  const r = prng(seed);
  const packets = fc.sample(fc.array(anyPacket, { maxLength: 60 }), { seed, numRuns: 1 })[0]!;
  const w = new PacketWriter();
  if (r() < 0.9) w.push({ type: 'psb' });
  for (const p of packets) {
    if (r() < 0.05) w.push({ type: 'psb' });
    w.push(p);
  }
  const bytes = Array.from(w.bytes());
  const mutations = Math.floor(r() * 6);
  for (let m = 0; m < mutations && bytes.length > 0; m++) {
    const at = Math.floor(r() * bytes.length);
    const kind = r();
    if (kind < 0.5) bytes[at] = Math.floor(r() * 256);
    else if (kind < 0.7) bytes[at] = 0x02;
    else if (kind < 0.85) bytes.splice(at, 1);
    else bytes.splice(at, 0, ...Array.from({ length: 1 + Math.floor(r() * 20) }, (_, k) => (k % 2 === 0 ? 0x02 : 0x82)));
  }
  const cut = r() < 0.3 ? Math.floor(r() * (bytes.length + 1)) : bytes.length;
  return Uint8Array.from(bytes.slice(0, cut));
}

describe('fuzz', () => {
  test('3000 mutated streams decode without throwing, with sane offsets and sizes', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const bytes = stream(seed);
      const dec = new PacketDecoder(bytes);
      const rec = dec.record;
      let lastError = -1;
      let expectNext = -1; // offset the next packet must have, -1 after a sync point
      let records = 0;
      while (dec.next()) {
        expect(++records).toBeLessThanOrEqual(bytes.length + 1); // never hangs: at most one record per byte (+ the no-PSB eos)
        if (rec.kind === 0) {
          expect(rec.offset).toBeGreaterThanOrEqual(0);
          expect(rec.offset).toBeLessThanOrEqual(bytes.length);
          expect(rec.offset).toBeGreaterThan(lastError);
          expect(rec.size).toBe(0);
          lastError = rec.offset;
          expectNext = -1;
          continue;
        }
        expect(rec.size).toBeGreaterThan(0);
        expect(rec.offset + rec.size).toBeLessThanOrEqual(bytes.length);
        if (expectNext >= 0) expect(rec.offset).toBe(expectNext);
        expectNext = rec.offset + rec.size;
      }
      // After a clean end the decoder stays ended.
      expect(dec.next()).toBe(false);
    }
  });

  test('chunked decoding gives the one-shot records for random chunk boundaries', () => {
    for (let seed = 1; seed <= 800; seed++) {
      const bytes = stream(seed);
      const r = prng(seed * 7919);
      const n = Math.floor(r() * 6);
      const cuts = Array.from({ length: n }, () => Math.floor(r() * (bytes.length + 1))).sort((a, b) => a - b);
      expect(chunkedJsonLines(bytes, cuts), `seed ${seed} cuts ${cuts.join(',')}`).toEqual(jsonLines(bytes));
    }
  });

  test('chunked decoding one byte at a time gives the one-shot records', () => {
    for (let seed = 1; seed <= 100; seed++) {
      const bytes = stream(seed);
      const cuts = Array.from({ length: bytes.length }, (_, i) => i);
      expect(chunkedJsonLines(bytes, cuts), `seed ${seed}`).toEqual(jsonLines(bytes));
    }
  });

  test('a packet cut by the end of a non-final buffer is not an error: consumed points at it', () => {
    const dec = new PacketDecoder(Uint8Array.from([0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x00, 0x19, 0x01]), { final: false });
    const kinds: number[] = [];
    while (dec.next()) kinds.push(dec.record.kind);
    expect(kinds).toEqual([2, 1]); // psb, pad
    expect(dec.consumed).toBe(17);
  });
});
