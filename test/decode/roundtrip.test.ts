// Every packet type: encode → decode round trip (property based), and every
// packet cut one byte short → eos at its offset (libipt ptunit-packet "cutoff").
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { encodePacket, PacketWriter } from '../../driver/decode/encode.js';
import type { Packet, PacketType } from '../../driver/decode/packet.js';
import { toPacket } from '../../driver/decode/record.js';
import { PtError } from '../../driver/base/errors.js';
import { ARBITRARIES } from './arbitrary.js';
import { jsonLines, PSB } from './helpers.js';

/** The packets and error names a synced decode of `bytes` yields. */
function decodeSynced(bytes: Uint8Array): (Packet | string)[] {
  const dec = new PacketDecoder(bytes, { synced: true });
  const out: (Packet | string)[] = [];
  while (dec.next()) out.push(dec.record.kind === 0 ? `error ${dec.record.error}` : toPacket(dec.record));
  return out;
}

/** BIP needs a BBP with the same SZ before it (spec §3.18). */
function context(p: Packet): Packet[] {
  return p.type === 'bip' ? [{ type: 'bbp', sz: p.sz, block_type: 1 }] : [];
}

const TYPES = Object.keys(ARBITRARIES) as PacketType[];

describe('encode → decode round trip', () => {
  test.for(TYPES)('%s round-trips for random payloads', (type) => {
    fc.assert(fc.property(ARBITRARIES[type], (p) => {
      const ctx = context(p);
      const w = new PacketWriter();
      for (const c of [...ctx, p]) w.push(c);
      expect(decodeSynced(w.bytes())).toEqual([...ctx, p]);
    }), { numRuns: 150 });
  });

  test('a random sequence of packets round-trips as a stream after a PSB', () => {
    // A BBP makes later `(b & 7) == 4` TNT-8 bytes BIPs (spec §3.18): sequences without BIP/BBP here.
    const arb = fc.oneof(...TYPES.filter((t) => t !== 'bip' && t !== 'bbp').map((t) => ARBITRARIES[t]));
    fc.assert(fc.property(fc.array(arb, { maxLength: 40 }), (ps) => {
      const w = new PacketWriter();
      w.push({ type: 'psb' });
      w.push({ type: 'pad' }); // keeps a following PSB from forming one 02 82 run with the first
      for (const p of ps) w.push(p);
      const want = [{ type: 'psb' }, { type: 'pad' }, ...ps];
      const dec = new PacketDecoder(w.bytes());
      const got: Packet[] = [];
      while (dec.next()) got.push(toPacket(dec.record));
      expect(got).toEqual(want);
    }), { numRuns: 200 });
  });
});

describe('cut one byte short', () => {
  // PAD and TNT-8 are always one byte: cutting them leaves no packet at all.
  test.for(TYPES.filter((t) => t !== 'pad' && t !== 'tnt.8'))('%s cut one byte short is eos at its offset', (type) => {
    fc.assert(fc.property(ARBITRARIES[type], (p) => {
      const ctx = context(p);
      const bytes = encodePacket(p);
      fc.pre(bytes.length > 1); // a one-byte packet cut short is no packet at all
      const w = new PacketWriter();
      w.push({ type: 'psb' });
      w.push({ type: 'pad' });
      for (const c of ctx) w.push(c);
      const at = w.length;
      w.raw(bytes.subarray(0, bytes.length - 1));
      const lines = jsonLines(w.bytes());
      expect(lines).toContain(`{"off":${at},"error":"eos"}`);
      expect(lines[lines.indexOf(`{"off":${at},"error":"eos"}`) - 1]).not.toContain('"error"');
    }), { numRuns: 60 });
  });
});

describe('encoder rejects what it cannot encode', () => {
  test.for([
    { what: 'TNT-8 with 7 results', p: { type: 'tnt.8', n: 7, bits: 0n } },
    { what: 'TNT-8 with 0 results', p: { type: 'tnt.8', n: 0, bits: 0n } },
    { what: 'TNT-64 with 48 results', p: { type: 'tnt.64', n: 48, bits: 0n } },
    { what: 'TNT bits wider than n', p: { type: 'tnt.8', n: 2, bits: 4n } },
    { what: 'an update-16 IP wider than 16 bits', p: { type: 'tip', ipc: 'update-16', ip: 0x10000n } },
    { what: 'a suppressed IP with a value', p: { type: 'fup', ipc: 'suppressed', ip: 1n } },
    { what: 'a PIP CR3 with bits 4:0 set', p: { type: 'pip', cr3: 0x1001n, nr: false } },
    { what: 'a CYC of 2^61', p: { type: 'cyc', value: 1n << 61n } },
    { what: 'a PTW plc of 2', p: { type: 'ptw', plc: 2, payload: 0n, ip: false } },
    { what: 'a CBR ratio of 256', p: { type: 'cbr', ratio: 256 } },
    { what: 'a TRIG icnt without icntv', p: { type: 'trig', ip: false, icntv: false, mult: false, trbv: 0, icnt: 1 } },
  ] as { what: string; p: Packet }[])('$what throws PtError bad_packet', ({ p }) => {
    let err: unknown;
    try { encodePacket(p); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(PtError);
    expect((err as PtError).code).toBe('bad_packet');
  });

  test('a rejected packet leaves the writer unchanged', () => {
    const w = new PacketWriter();
    w.push({ type: 'pad' });
    expect(() => w.push({ type: 'cbr', ratio: 300 })).toThrow(PtError);
    expect(Array.from(w.bytes())).toEqual([0x00]);
  });

  test('the writer grows past its initial capacity', () => {
    const w = new PacketWriter(16);
    for (let i = 0; i < 100; i++) w.push({ type: 'psb' });
    expect(w.length).toBe(1600);
    expect(Array.from(w.bytes().subarray(1584))).toEqual(PSB);
  });
});
