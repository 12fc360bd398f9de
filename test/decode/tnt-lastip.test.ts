// TNT bit order (docs/sdm/packets.md §3.2 examples, oldest branch first) and
// Last-IP reconstruction (spec §5): every IPBytes kind, sext-48, PSB reset, OVF option.
import { describe, expect, test } from 'vitest';
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { LastIp, reconstructIp } from '../../driver/decode/last-ip.js';
import type { Packet } from '../../driver/decode/packet.js';
import { toPacket } from '../../driver/decode/record.js';
import { hex } from './helpers.js';

function one(bytes: string): Packet {
  const dec = new PacketDecoder(Uint8Array.from(hex(bytes)), { synced: true });
  expect(dec.next()).toBe(true);
  return toPacket(dec.record);
}

describe('TNT bit order', () => {
  test.for([
    { bytes: '0A', n: 2, bits: 0b01n, results: 'NT' },
    { bytes: '04', n: 1, bits: 0b0n, results: 'N' },
    { bytes: '06', n: 1, bits: 0b1n, results: 'T' },
    { bytes: '80', n: 6, bits: 0b000000n, results: 'NNNNNN' },
    { bytes: 'FE', n: 6, bits: 0b111111n, results: 'TTTTTT' },
    { bytes: '0C', n: 2, bits: 0b10n, results: 'TN' },
    { bytes: '02 A3 02 00 00 00 00 00', n: 1, bits: 0n, results: 'N' },
    { bytes: '02 A3 05 00 00 00 00 00', n: 2, bits: 0b01n, results: 'NT' },
    { bytes: '02 A3 00 00 00 00 00 C0', n: 47, bits: 1n << 46n, results: 'T' + 'N'.repeat(46) },
  ])('$bytes holds $results', ({ bytes, n, bits, results }) => {
    const p = one(bytes);
    expect(p).toMatchObject({ n, bits });
    // oldest = bit n-1
    let s = '';
    for (let k = n - 1; k >= 0; k--) s += ((bits >> BigInt(k)) & 1n) === 1n ? 'T' : 'N';
    expect(s).toBe(results);
  });
});

describe('Last-IP reconstruction', () => {
  const last = 0x1122_3344_5566_7788n;
  test.for([
    { ipb: 1, payload: 0xabcdn, want: 0x1122_3344_5566_abcdn },
    { ipb: 2, payload: 0xabcd_ef01n, want: 0x1122_3344_abcd_ef01n },
    { ipb: 3, payload: 0x7fff_1234_5678n, want: 0x0000_7fff_1234_5678n },
    { ipb: 3, payload: 0x8000_1234_5678n, want: 0xffff_8000_1234_5678n },
    { ipb: 4, payload: 0x8000_1234_5678n, want: 0x1122_8000_1234_5678n },
    { ipb: 6, payload: 0xdead_beef_0000_0001n, want: 0xdead_beef_0000_0001n },
  ])('IPBytes $ipb with payload $payload gives $want', ({ ipb, payload, want }) => {
    expect(reconstructIp(ipb, payload, last)).toBe(want);
    const t = new LastIp();
    t.feedPacket({ type: 'tip', ipc: 'full', ip: last });
    const ipc = (['suppressed', 'update-16', 'update-32', 'sext-48', 'update-48', '', 'full'] as const)[ipb] as Exclude<Packet & { type: 'tip' }, never>['ipc'];
    expect(t.feedPacket({ type: 'tip', ipc, ip: payload })).toBe(want);
    expect(t.ip).toBe(want);
  });

  test('a suppressed IP gives no IP and leaves LastIP unchanged', () => {
    const t = new LastIp();
    t.feedPacket({ type: 'fup', ipc: 'full', ip: 0x1234n });
    expect(t.feedPacket({ type: 'tip.pgd', ipc: 'suppressed', ip: 0n })).toBeNull();
    expect(t.ip).toBe(0x1234n);
  });

  test('LastIP starts at 0, so update-16 at the start compresses against 0', () => {
    expect(new LastIp().feedPacket({ type: 'tip', ipc: 'update-16', ip: 0x1234n })).toBe(0x1234n);
  });

  test('PSB resets LastIP to 0', () => {
    const t = new LastIp();
    t.feedPacket({ type: 'tip', ipc: 'full', ip: 0x7fff_0000_1000n });
    t.feedPacket({ type: 'psb' });
    expect(t.feedPacket({ type: 'fup', ipc: 'update-32', ip: 0x2000n })).toBe(0x2000n);
  });

  test('OVF keeps LastIP by default (SDM)', () => {
    const t = new LastIp();
    t.feedPacket({ type: 'tip', ipc: 'full', ip: 0x7fff_0000_1000n });
    t.feedPacket({ type: 'ovf' });
    expect(t.feedPacket({ type: 'fup', ipc: 'update-16', ip: 0x2000n })).toBe(0x7fff_0000_2000n);
  });

  test('OVF resets LastIP with resetAtOvf (libipt 2.0.5)', () => {
    const t = new LastIp({ resetAtOvf: true });
    t.feedPacket({ type: 'tip', ipc: 'full', ip: 0x7fff_0000_1000n });
    t.feedPacket({ type: 'ovf' });
    expect(t.feedPacket({ type: 'fup', ipc: 'update-16', ip: 0x2000n })).toBe(0x2000n);
  });

  test('feed() over decoded records reconstructs the same IPs as the packet form', () => {
    const bytes = Uint8Array.from(hex('CD 08 07 06 05 04 03 02 01 2D 34 12 0D 6D 00 00 00 00 00 80 02 82 02 82 02 82 02 82 02 82 02 82 02 82 02 82 4D 78 56 34 12'));
    const dec = new PacketDecoder(bytes, { synced: true });
    const t = new LastIp();
    const got: bigint[] = [];
    while (dec.next()) if (t.feed(dec.record)) got.push(t.ip);
    expect(got).toEqual([0x0102_0304_0506_0708n, 0x0102_0304_0506_1234n, 0xffff_8000_0000_0000n, 0x1234_5678n]);
  });
});
