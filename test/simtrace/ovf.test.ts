// docs/sdm/packets.md §12 (OVF), §5 (first IP after OVF uncompressed), §8 (PSB+ after the OVF's FUP);
// the internal buffer model (drain rate, capacity, dropped bytes).
import { describe, expect, test } from 'vitest';
import { InternalBuffer } from '../../harness/sim/trace/internal-buffer.js';
import { BASE, make, regs, USER_BRANCHES } from './harness.js';

// 64-byte buffer draining 1 byte per 4 cycles; branches cost no cycles, so only
// `instructions()` drains it: the arithmetic below is exact.
const SMALL = { buffer: { capacity: 64, drainBytesPerCycle: 0.25 }, clock: { cyclesPerBranch: 0 } };
const tip = (t: ReturnType<typeof make>, to: number): void => t.g.branchIndirect('jmp', BASE, BASE + 2, to);

/** Enabled (29-byte PSB+ … TIP.PGE) and filled with 11 three-byte TIPs: 62 of 64 bytes. */
function full(opts = {}, status = {}) {
  const t = make({ ...SMALL, ...opts });
  t.g.traceEnable(BASE, regs(USER_BRANCHES, status));
  for (let i = 0; i < 11; i++) tip(t, BASE + 0x100 + (i & 1) * 0x100);
  return t;
}

describe('InternalBuffer', () => {
  test('drains at the configured rate', () => {
    const b = new InternalBuffer({ capacity: 100, drainBytesPerCycle: 0.5 });
    b.accept(80, 0);
    expect(b.free(0)).toBe(20);
    expect(b.free(40)).toBe(40);
    expect(b.occupancy(1000)).toBe(0);
  });

  test('a flush empties it at once', () => {
    const b = new InternalBuffer({ capacity: 100, drainBytesPerCycle: 0.5 });
    b.accept(80, 0);
    b.flush(0);
    expect(b.free(0)).toBe(100);
  });
});

describe('overflow', () => {
  test('a packet that does not fit is dropped, and so is everything until the buffer drains', () => {
    const t = full();
    for (let i = 0; i < 4; i++) tip(t, BASE + 0x300);          // 4 × 3 bytes dropped
    expect(t.g.overflowing).toBe(true);
    expect(t.g.dropped).toBe(12);
    expect(t.g.status().PacketByteCnt).toBe(62);              // dropped bytes are not counted
  });

  test('when it clears: OVF, then FUP(next IP) with the IP uncompressed (IPBytes 011)', () => {
    const t = full();
    tip(t, BASE + 0x300);
    t.next();
    t.g.instructions(1000);                                    // 250 bytes drained
    tip(t, BASE + 0x500);                                      // its TIP is lost; tracing resumes at 0x10000500
    expect(t.next()).toEqual(['ovf', 'fup 3 0x10000500']);
    expect(t.g.overflowing).toBe(false);
    expect(t.g.dropped).toBe(6);
  });

  test('IP compression after the OVF uses the FUP as LastIP', () => {
    const t = full();
    tip(t, BASE + 0x300);
    t.g.instructions(1000);
    tip(t, BASE + 0x500);
    t.next();
    tip(t, BASE + 0x600);
    expect(t.next()).toEqual(['tip 1 0x600']);
  });

  test('pending TNT bits and the RET stack are gone after an OVF', () => {
    const t = full();
    t.g.branchDirect('call', BASE, BASE + 5, BASE + 0x40);
    t.g.branchJcc(BASE + 0x40, BASE + 0x42, BASE + 0x50, true);
    tip(t, BASE + 0x300);                                      // overflow starts (TNT flushed into the bin)
    t.g.instructions(1000);
    t.g.ret(BASE + 0x50, BASE + 0x51, BASE + 5);               // resolves; not compressed
    t.g.ret(BASE + 0x50, BASE + 0x51, BASE + 5);
    expect(t.next().slice(-3)).toEqual(['ovf', 'fup 3 0x10000005', 'tip 1 0x5']);
  });

  test('a PSB+ that becomes due with the OVF and FUP is written after the FUP', () => {
    const t = make(SMALL);
    t.g.traceEnable(BASE, regs(USER_BRANCHES, { PacketByteCnt: 1980 }));   // 11 bytes → 1991
    for (let i = 0; i < 17; i++) tip(t, BASE + 0x100 + (i & 1) * 0x100);  // 2042
    tip(t, BASE + 0x300);                                                  // dropped
    t.next();
    t.g.instructions(1000);
    tip(t, BASE + 0x500);                                                  // OVF 2 + FUP 7 → 2051
    expect(t.next()).toEqual(['ovf', 'fup 3 0x10000500', 'psb', 'cbr 32', 'mode.exec 64', 'fup 2 0x10000500', 'psbend']);
  });

  test('with PacketEn = 0 when it clears: OVF without FUP, and the next TIP.PGE is uncompressed', () => {
    const t = full();
    tip(t, BASE + 0x300);                                                    // overflow starts
    t.g.farTransfer('syscall', BASE, BASE + 2, -0x7f000000, 0, 0, 1);       // lost TIP.PGD()
    t.g.instructions(1000);
    t.g.farTransfer('sysret', -0x7f000000, -0x7effffff, BASE + 2, 3, 0, 1);  // resolves with PacketEn=1 …
    const t2 = full();
    tip(t2, BASE + 0x300);
    t2.g.farTransfer('syscall', BASE, BASE + 2, -0x7f000000, 0, 0, 1);
    t2.g.instructions(1000);
    t2.g.movCr3(-0x7f000000, -0x7efffffd, 0x2000);                           // … this one with PacketEn=0
    t2.g.farTransfer('sysret', -0x7f000000, -0x7effffff, BASE + 2, 3, 0x2000, 1);
    expect(t.next().slice(-2)).toEqual(['ovf', 'fup 3 0x10000002']);
    expect(t2.next().slice(-3)).toEqual(['ovf', 'mode.exec 64', 'tip.pge 3 0x10000002']);
  });

  test('clearing TraceEn during an overflow writes OVF, FUP(CLIP), TIP.PGD()', () => {
    const t = full();
    tip(t, BASE + 0x300);
    t.next();
    t.g.traceDisable(BASE + 0x300);
    expect(t.next()).toEqual(['ovf', 'fup 3 0x10000300', 'tip.pgd 0']);
  });
});
