// Collection and the loss ledger (docs/design.md losses.json): balance on constructed cases, OVF
// entries found in the stream, single-range wrap tracked by the driver (docs/sdm/output.md §3, §8).
import { describe, expect, test } from 'vitest';
import { imbalance, isLossless, LossRecorder, type LossLedger } from '../../driver/collect/ledger.js';
import { findOvfs } from '../../driver/collect/ovf.js';
import { TraceSession } from '../../driver/session.js';
import { pump, rig } from './rig.js';

// Packets by hand (docs/sdm/packets.md): PSB = 02 82 ×8, PSBEND = 02 23, OVF = 02 F3, PAD = 00.
const PSB = Array.from({ length: 8 }, () => [0x02, 0x82]).flat();
const PSBEND = [0x02, 0x23], OVF = [0x02, 0xf3];

describe('ledger balance: written = collected + Σ lost.bytes', () => {
  test.for([
    { name: 'lossless', l: { written: 100, collected: 100, lost: [] }, want: 0 },
    { name: 'a wrap that overwrote 40 bytes', l: { written: 140, collected: 100, lost: [{ at: 0, bytes: 40, reason: 'wrap' }] }, want: 0 },
    { name: 'a STOP cut (nothing written is missing)', l: { written: 100, collected: 100, lost: [{ at: 100, bytes: null, reason: 'stop' }] }, want: 0 },
    { name: 'an OVF does not count bytes', l: { written: 100, collected: 100, dropped: 7, lost: [{ at: 50, bytes: null, reason: 'ovf' }] }, want: 0 },
    { name: 'silently dropped bytes show as imbalance', l: { written: 100, collected: 90, lost: [] }, want: 10 },
  ] as { name: string; l: LossLedger; want: number }[])('$name', ({ l, want }) => {
    expect(imbalance(l)).toBe(want);
  });
  test('without written (a real target) the balance is unknown', () => {
    expect(imbalance({ collected: 5, lost: [] })).toBeUndefined();
  });
  test('a run with any loss entry is not lossless', () => {
    expect(isLossless({ collected: 5, lost: [{ at: 1, bytes: null, reason: 'ovf' }] })).toBe(false);
  });
  test('the recorder orders losses by stream offset', () => {
    const r = new LossRecorder();
    r.add(30, null, 'ovf'); r.add(0, 12, 'wrap');
    expect(r.ledger(50, { written: 62 }).lost.map((x) => x.at)).toEqual([0, 30]);
  });
});

describe('OVF packets in the stream', () => {
  test('every OVF after the first PSB is found at its offset', () => {
    const s = Uint8Array.from([...PSB, ...PSBEND, ...OVF, 0, ...OVF]);
    expect(findOvfs(s)).toEqual([18, 21]);
  });
  test('the bytes on either side of a ToPA STOP cut are not read as one OVF', () => {
    // A full STOP region may end in the first byte of a packet (02) and the bytes after the restart
    // begin with F3: read as one stream, 02 F3 is an OVF the CPU never wrote.
    const before = [...PSB, ...PSBEND, 0, 0x02];
    const after = [0xf3, ...PSB, ...PSBEND, 0];
    const s = Uint8Array.from([...before, ...after]);
    expect(findOvfs(s)).toEqual([before.length - 1]);
    expect(findOvfs(s, [before.length])).toEqual([]);
  });
  test('an OVF inside a stretch after a cut is still found', () => {
    const before = [...PSB, ...PSBEND, 0];
    const after = [...PSB, ...PSBEND, ...OVF];
    expect(findOvfs(Uint8Array.from([...before, ...after]), [before.length])).toEqual([before.length + 18]);
  });
  test('a stream without OVF has none', () => {
    expect(findOvfs(Uint8Array.from([...PSB, ...PSBEND, 0, 0]))).toEqual([]);
  });
  test('collection adds an OVF entry with bytes null', async () => {
    const r = await rig('skylake');
    const s = await TraceSession.open(r.target, { output: { scheme: 'single-range', size: 4096 } });
    await s.start();
    await r.out.writeBytes(Uint8Array.from([...PSB, ...PSBEND, ...OVF]));
    const res = await s.stop();
    expect(res.ledger.lost).toEqual([{ at: 18, bytes: null, reason: 'ovf' }]);
  });
});

describe('single-range collection', () => {
  test('without a wrap the stream is [0, OutputOffset)', async () => {
    const r = await rig('skylake');
    const s = await TraceSession.open(r.target, { output: { scheme: 'single-range', size: 4096 } });
    await s.start();
    await pump(r, s, 3000, 1000);
    const res = await s.stop(() => ({ written: r.out.written }));
    expect([Buffer.from(res.stream).equals(Buffer.from(r.fed)), res.ledger.lost, imbalance(res.ledger)]).toEqual([true, [], 0]);
  });
  test('after a wrap the stream is the last 4096 bytes, oldest first', async () => {
    const r = await rig('skylake');
    const s = await TraceSession.open(r.target, { output: { scheme: 'single-range', size: 4096 } });
    await s.start();
    await pump(r, s, 10_000, 1000);
    const res = await s.stop(() => ({ written: r.out.written }));
    expect(Buffer.from(res.stream).equals(Buffer.from(r.fed.slice(-4096)))).toBe(true);
  });
  test('a wrap is a loss at offset 0 that balances when the target says what it wrote', async () => {
    const r = await rig('skylake');
    const s = await TraceSession.open(r.target, { output: { scheme: 'single-range', size: 4096 } });
    await s.start();
    await pump(r, s, 10_000, 1000);
    const res = await s.stop(() => ({ written: r.out.written }));
    expect([res.ledger.lost, imbalance(res.ledger)]).toEqual([[{ at: 0, bytes: 10_000 - 4096, reason: 'wrap' }], 0]);
  });
  test('on a target that does not say what it wrote, the wrap is recorded with bytes null', async () => {
    const r = await rig('skylake');
    const s = await TraceSession.open(r.target, { output: { scheme: 'single-range', size: 4096 } });
    await s.start();
    await pump(r, s, 10_000, 1000);
    const res = await s.stop();
    expect(res.ledger.lost).toEqual([{ at: 0, bytes: null, reason: 'wrap' }]);
  });
  test('the driver sees a wrap between two observations even if the range ends zeroed', async () => {
    const r = await rig('skylake');
    const s = await TraceSession.open(r.target, { output: { scheme: 'single-range', size: 4096, }, switching: 'manual' });
    await s.start();
    await r.out.writeBytes(new Uint8Array(3000)); // zeros: the zero-fill cannot show a wrap
    await s.onEvent({ kind: 'slice', cpu: 0, branches: 1 }); // observes offset 3000
    await r.out.writeBytes(new Uint8Array(2000)); // wraps to offset 904 < 3000
    const res = await s.stop();
    expect(res.ledger.lost.map((l) => l.reason)).toEqual(['wrap']);
  });
});

describe('operational error', () => {
  test('an error at stop is in the ledger as an error loss with bytes null', async () => {
    const r = await rig('skylake');
    const s = await TraceSession.open(r.target, { output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 } });
    await s.start();
    await pump(r, s, 1000);
    r.sim.unit(0).operationalError();
    const res = await s.stop(() => ({ written: r.out.written }));
    expect([res.ledger.lost, imbalance(res.ledger)]).toEqual([[{ at: 1000, bytes: null, reason: 'error' }], 0]);
  });
});
