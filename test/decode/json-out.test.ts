// The byte writers of dump and flow output (driver/decode/ascii-out.ts, json-out.ts, text-out.ts) write the
// same lines as the string formatters, byte for byte: on arbitrary packets, arbitrary bytes
// (decode errors and resynchronisation), line-buffer hand-overs mid-stream, and the edges of
// the number and hex writers.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { AsciiOut, Piece, PIECE_SLACK, putDec, putHex64, putPiece } from '../../driver/decode/ascii-out.js';
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { encodePackets } from '../../driver/decode/encode.js';
import { hex64, packetJsonLine } from '../../driver/decode/json.js';
import { writePacketJson } from '../../driver/decode/json-out.js';
import { TextFormatter } from '../../driver/decode/text.js';
import { TextOut } from '../../driver/decode/text-out.js';
import { anyPacket } from './arbitrary.js';

/** Everything `fill` writes through an AsciiOut of `capacity` bytes, as one string. */
function written(capacity: number, fill: (o: AsciiOut) => void): string {
  let s = '';
  const o = new AsciiOut((b) => { s += Buffer.from(b).toString('latin1'); }, capacity);
  fill(o);
  o.flush();
  return s;
}

describe('AsciiOut and its writers', () => {
  /** What `put` writes from position 0 of a fresh buffer, as a string. */
  const put = (f: (buf: Uint8Array) => number): string => { const buf = new Uint8Array(64); return Buffer.from(buf.subarray(0, f(buf))).toString('latin1'); };

  test.for([0, 9, 10, 99, 12345, 2 ** 32, 2 ** 53 - 1])('putDec(%d) is the decimal string', (n) => {
    expect(put((b) => putDec(b, 0, n))).toBe(`${n}`);
  });

  test('putHex64 is json.ts hex64 for arbitrary halves', () => {
    fc.assert(fc.property(fc.integer(), fc.integer(), (lo, hi) => put((b) => putHex64(b, 0, lo, hi)) === hex64(lo, hi)));
  });

  test('putPiece writes the piece and returns its end, touching at most PIECE_SLACK bytes after it', () => {
    fc.assert(fc.property(fc.string({ unit: fc.integer({ min: 32, max: 126 }).map((c) => String.fromCharCode(c)), maxLength: 40 }), fc.nat(7), (text, at) => {
      const buf = new Uint8Array(64).fill(0xee);
      const end = putPiece(new DataView(buf.buffer), at, new Piece(text));
      const untouched = buf.subarray(end + PIECE_SLACK).every((b) => b === 0xee) && buf.subarray(0, at).every((b) => b === 0xee);
      return end === at + text.length && Buffer.from(buf.subarray(at, end)).toString('latin1') === text && untouched;
    }));
  });

  test('a line is never split across hand-overs, and a line longer than the buffer is an error', () => {
    const parts: string[] = [];
    const o = new AsciiOut((b) => parts.push(Buffer.from(b).toString('latin1')), 16);
    for (let i = 0; i < 5; i++) o.line(`line-${i}-xx`);
    o.flush();
    expect([parts.every((p) => p.endsWith('\n')), parts.join('')]).toEqual([true, 'line-0-xx\nline-1-xx\nline-2-xx\nline-3-xx\nline-4-xx\n']);
    expect(() => { const x = new AsciiOut(() => undefined, 8); x.line('0123456789'); }).toThrow(RangeError);
  });
});

describe('writePacketJson', () => {
  test('writes packetJsonLine for arbitrary packets and arbitrary bytes, through small buffers too', () => {
    fc.assert(fc.property(fc.array(anyPacket, { maxLength: 60 }), fc.uint8Array({ maxLength: 48 }), fc.constantFrom(256, 4096), (packets, junk, capacity) => {
      const bytes = new Uint8Array([...encodePackets(packets), ...junk]);
      const want: string[] = [];
      const dec = new PacketDecoder(bytes);
      while (dec.next()) want.push(`${packetJsonLine(dec.record)}\n`);
      const got = written(capacity, (o) => { const d = new PacketDecoder(bytes); while (d.next()) writePacketJson(o, d.record); });
      return got === want.join('');
    }), { numRuns: 500 });
  });
});

describe('TextOut', () => {
  test('writes TextFormatter\'s lines for arbitrary packets and arbitrary bytes, Last IP included', () => {
    fc.assert(fc.property(fc.array(anyPacket, { maxLength: 60 }), fc.uint8Array({ maxLength: 48 }), fc.constantFrom(256, 4096), (packets, junk, capacity) => {
      const bytes = new Uint8Array([...encodePackets(packets), ...junk]);
      const want: string[] = [];
      const fmt = new TextFormatter();
      const dec = new PacketDecoder(bytes);
      while (dec.next()) want.push(`${fmt.line(dec.record)}\n`);
      const got = written(capacity, (o) => { const t = new TextOut(o); const d = new PacketDecoder(bytes); while (d.next()) t.write(d.record); });
      return got === want.join('');
    }), { numRuns: 500 });
  });
});
