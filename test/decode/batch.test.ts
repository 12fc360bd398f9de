// PacketDecoder.decodeBatch() against next(): the same records (via the
// packet JSON of docs/formats/packet-json.md), errors, resync and checksum, for any
// batch capacity, chunked input, and decodeBatch() mixed with next(); with
// columns in a hot-loop.ts pool region (written in place) and with own
// columns (copied in). Pool regions are few and never given back, so the
// pooled batches here are made once per capacity (at most 6) and reused.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { PacketBatch } from '../../driver/decode/batch.js';
import { CHECKSUM_INIT, checksumBatch, checksumRecord } from '../../driver/decode/checksum.js';
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { PacketWriter } from '../../driver/decode/encode.js';
import { packetJsonLine } from '../../driver/decode/json.js';
import { PacketKind, PacketRecord } from '../../driver/decode/record.js';
import { anyPacket } from './arbitrary.js';
import { damagedStream, hex, jsonLines } from './helpers.js';

const batches = new Map<string, PacketBatch>();

/** A checksumming batch of `capacity`, pooled or not, reused across tests (its checksum reset). */
function batchOf(capacity: number, pooled: boolean): PacketBatch {
  const key = `${capacity}/${pooled}`;
  let batch = batches.get(key);
  if (batch === undefined) {
    batch = new PacketBatch(capacity, { checksum: true, pooled });
    expect(batch.region >= 0).toBe(pooled);
    batches.set(key, batch);
  }
  batch.resetChecksum();
  return batch;
}

/** JSON lines and checksum of a decode through decodeBatch() with batches of `capacity`. */
function batchDecode(bytes: Uint8Array, capacity: number, pooled = true): { lines: string[]; checksum: number; errors: number } {
  const dec = new PacketDecoder(bytes);
  const batch = batchOf(capacity, pooled && capacity <= 4096);
  const rec = new PacketRecord();
  const lines: string[] = [];
  let errors = 0;
  for (let n = dec.decodeBatch(batch); n > 0; n = dec.decodeBatch(batch)) {
    expect(batch.count).toBe(n);
    for (let j = 0; j < n; j++) lines.push(packetJsonLine(batch.read(j, rec)));
    errors += batch.errors;
  }
  return { lines, checksum: batch.checksum, errors };
}

/** Checksum of the records next() produces (checksum.ts). */
function nextChecksum(bytes: Uint8Array): number {
  const dec = new PacketDecoder(bytes);
  let h = CHECKSUM_INIT;
  while (dec.next()) h = checksumRecord(h, dec.record);
  return h;
}


describe('PacketBatch decoding', () => {
  const cases = [
    { seed: 1, flips: 0, capacity: 4096 },
    { seed: 2, flips: 0, capacity: 1 },
    { seed: 3, flips: 0, capacity: 7 },
    { seed: 4, flips: 20, capacity: 4096 },
    { seed: 5, flips: 20, capacity: 3 },
    { seed: 6, flips: 200, capacity: 64 },
    { seed: 7, flips: 5, capacity: 5000 },
  ];
  test.for(cases.flatMap((c) => [{ ...c, pooled: true }, { ...c, pooled: false }]))(
    'decodeBatch gives the records of next() (seed $seed, $flips flipped bytes, capacity $capacity, pooled $pooled)',
    ({ seed, flips, capacity, pooled }) => {
      const bytes = damagedStream(seed, 24 << 10, flips);
      expect(batchDecode(bytes, capacity, pooled).lines).toEqual(jsonLines(bytes));
    },
  );

  test.for([
    { seed: 11, flips: 0, capacity: 4096, pooled: true },
    { seed: 11, flips: 0, capacity: 4096, pooled: false },
    { seed: 12, flips: 50, capacity: 5, pooled: true },
    { seed: 12, flips: 50, capacity: 5, pooled: false },
  ])('the batch checksum equals checksumRecord over next() (seed $seed, $flips flipped bytes, pooled $pooled)', ({ seed, flips, capacity, pooled }) => {
    const bytes = damagedStream(seed, 24 << 10, flips);
    expect(batchDecode(bytes, capacity, pooled).checksum).toBe(nextChecksum(bytes));
  });

  test('the batch checksum equals checksumBatch over the stored columns', () => {
    const bytes = damagedStream(21, 16 << 10, 30);
    const dec = new PacketDecoder(bytes);
    const batch = batchOf(64, true);
    let h = CHECKSUM_INIT;
    for (let n = dec.decodeBatch(batch); n > 0; n = dec.decodeBatch(batch)) h = checksumBatch(h, batch);
    expect(batch.checksum).toBe(h);
  });

  test('decodeBatch matches next() on random packet sequences after a PSB', () => {
    fc.assert(fc.property(fc.array(anyPacket, { maxLength: 60 }), fc.constantFrom(1, 3, 7), fc.boolean(), (ps, capacity, pooled) => {
      const w = new PacketWriter();
      w.push({ type: 'psb' });
      for (const p of ps) w.push(p);
      const bytes = w.bytes();
      const got = batchDecode(bytes, capacity, pooled);
      expect(got.lines).toEqual(jsonLines(bytes));
      expect(got.checksum).toBe(nextChecksum(bytes));
    }), { numRuns: 300 });
  });

  test('batch.errors counts the error records of the batch', () => {
    const bytes = damagedStream(31, 16 << 10, 40);
    const want = jsonLines(bytes).filter((l) => l.includes('"error"')).length;
    expect(want).toBeGreaterThan(0);
    expect(batchDecode(bytes, 4096).errors).toBe(want);
  });

  test('a stream without a PSB gives one eos error record, as next() does', () => {
    const bytes = Uint8Array.from(hex('06 06 06 06 06 06 06 06 06 06 06 06'));
    const got = batchDecode(bytes, 16);
    expect(got.lines).toEqual(jsonLines(bytes));
    expect(got.errors).toBe(1);
  });

  test('decodeBatch returns 0 once the buffer is exhausted, and keeps returning 0', () => {
    const bytes = damagedStream(41, 4 << 10, 0);
    const dec = new PacketDecoder(bytes);
    const batch = batchOf(5000, false);
    expect(dec.decodeBatch(batch)).toBeGreaterThan(0);
    expect(dec.decodeBatch(batch)).toBe(0);
    expect(dec.decodeBatch(batch)).toBe(0);
    expect(batch.count).toBe(0);
  });

  test('decodeBatch and next() may be mixed on one decoder', () => {
    const bytes = damagedStream(51, 16 << 10, 10);
    const dec = new PacketDecoder(bytes);
    const batch = batchOf(64, true);
    const rec = new PacketRecord();
    const lines: string[] = [];
    for (let turn = 0; ; turn++) {
      if (turn % 2 === 0) {
        const n = dec.decodeBatch(batch);
        for (let j = 0; j < n; j++) lines.push(packetJsonLine(batch.read(j, rec)));
        if (n === 0) break;
      } else {
        for (let k = 0; k < 5 && dec.next(); k++) lines.push(packetJsonLine(dec.record));
      }
    }
    expect(lines).toEqual(jsonLines(bytes));
  });

  test('chunked decoding with decodeBatch gives the one-shot records', () => {
    const bytes = damagedStream(61, 16 << 10, 10);
    const cuts = [1000, 1001, 5003, 9000, 12001];
    const lines: string[] = [];
    const batch = batchOf(64, true);
    const rec = new PacketRecord();
    let dec: PacketDecoder | undefined;
    let pending = new Uint8Array(0);
    let from = 0;
    for (const end of [...cuts, bytes.length]) {
      const final = end === bytes.length;
      const buf = new Uint8Array(pending.length + end - from);
      buf.set(pending, 0);
      buf.set(bytes.subarray(from, end), pending.length);
      from = end;
      if (dec === undefined) dec = new PacketDecoder(buf, { final });
      else dec.resume(buf, { final });
      for (let n = dec.decodeBatch(batch); n > 0; n = dec.decodeBatch(batch)) {
        for (let j = 0; j < n; j++) lines.push(packetJsonLine(batch.read(j, rec)));
      }
      pending = buf.slice(dec.consumed);
    }
    expect(lines).toEqual(jsonLines(bytes));
  });

  test('two batches decoding in turn keep their own packets', () => {
    const x = damagedStream(91, 4 << 10, 0);
    const y = damagedStream(92, 4 << 10, 0);
    const bx = batchOf(64, true);
    const by = batchOf(7, true);
    const dx = new PacketDecoder(x);
    const dy = new PacketDecoder(y);
    dx.decodeBatch(bx);
    dy.decodeBatch(by);
    const rec = new PacketRecord();
    expect(Array.from({ length: bx.count }, (_, j) => packetJsonLine(bx.read(j, rec)))).toEqual(jsonLines(x).slice(0, 64));
    expect(Array.from({ length: by.count }, (_, j) => packetJsonLine(by.read(j, rec)))).toEqual(jsonLines(y).slice(0, 7));
  });

  test('offsets are absolute with a baseOffset', () => {
    const bytes = damagedStream(71, 2 << 10, 0);
    const dec = new PacketDecoder(bytes, { baseOffset: 2 ** 40 });
    const batch = batchOf(4096, true);
    dec.decodeBatch(batch);
    expect(batch.offset[0]).toBe(2 ** 40 + 0);
    expect(batch.kind[0]).toBe(PacketKind.psb);
    expect(batch.offset[1]).toBe(2 ** 40 + 16);
  });
});

describe('PacketBatch columns', () => {
  // Layout of batch.ts, written out for one packet of each packed kind.
  test.for([
    { bytes: '99 05', kind: 'mode.exec', a: 0b101 },
    { bytes: '99 22', kind: 'mode.tsx', a: 0b10 },
    { bytes: '02 73 34 12 00 FF 01', kind: 'tma', a: 0x1234 | (0x1ff << 16) },
    { bytes: '02 22 00 5A', kind: 'pwre', a: 0x5 | (0xa << 4) },
    { bytes: '59 AB', kind: 'mtc', a: 0xab },
    { bytes: '02 03 24 00', kind: 'cbr', a: 0x24 },
  ])('$kind packs its small fields into `a`', ({ bytes, kind, a }) => {
    // Eight PADs after it: enough bytes for the batch fast path (hot-loop.ts).
    const dec = new PacketDecoder(Uint8Array.from(hex(`${bytes} 00 00 00 00 00 00 00 00`)), { synced: true });
    const batch = batchOf(16, true);
    expect(dec.decodeBatch(batch)).toBe(9);
    expect(batch.kind[0]).toBe(PacketKind[kind as keyof typeof PacketKind]);
    expect(batch.a[0]).toBe(a);
  });

  test('lo and hi hold int32 bits; read() gives the unsigned halves', () => {
    // TIP with IPBytes 110b (full 8 bytes): payload 0xFFFFFFFF_80000001.
    const dec = new PacketDecoder(Uint8Array.from(hex('CD 01 00 00 80 FF FF FF FF 00 00 00 00 00 00 00 00')), { synced: true });
    const batch = batchOf(1, true);
    expect(dec.decodeBatch(batch)).toBe(1);
    expect(batch.lo[0]).toBe(0x80000001 | 0);
    expect(batch.hi[0]).toBe(-1);
    const rec = batch.read(0, new PacketRecord());
    expect(rec.lo).toBe(0x80000001);
    expect(rec.hi).toBe(0xffffffff);
  });

  test('a capacity below 1 is refused', () => {
    expect(() => new PacketBatch(0)).toThrow(RangeError);
  });
});

// Last: it uses up the pool regions of this test process.
describe('PacketBatch pool regions', () => {
  test('a capacity above 4096 packets gets no pool region', () => {
    expect(new PacketBatch(4097).region).toBe(-1);
  });

  test('batches with and without a pool region decode the same records', () => {
    // Pool regions are few and never given back (batch.ts `region`): the later batches copy.
    const bytes = damagedStream(81, 8 << 10, 10);
    const want = jsonLines(bytes);
    const rec = new PacketRecord();
    const regions: boolean[] = [];
    for (let k = 0; k < 12; k++) {
      const batch = new PacketBatch(4096);
      regions.push(batch.region >= 0);
      const dec = new PacketDecoder(bytes);
      const lines: string[] = [];
      for (let n = dec.decodeBatch(batch); n > 0; n = dec.decodeBatch(batch)) {
        for (let j = 0; j < n; j++) lines.push(packetJsonLine(batch.read(j, rec)));
      }
      expect(lines).toEqual(want);
    }
    expect(regions).toContain(false);
  });
});
