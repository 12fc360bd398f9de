// docs/sdm/packets.md §8 (PSB+ contents, order, when due), README Open Question 21
// (PacketByteCnt cumulative modulo 2^17), output.md §7.4 (PendPSB).
import { describe, expect, test } from 'vitest';
import { BASE, make, regs, started, USER_BRANCHES, type CtlFields } from './harness.js';
import { tokens } from './pkt.js';

const PSB_BYTES = Array(8).fill([0x02, 0x82]).flat();
/** Byte offsets of every PSB in `b`. */
function psbOffsets(b: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i + 16 <= b.length; i++) if (PSB_BYTES.every((x, k) => b[i + k] === x)) { out.push(i); i += 15; }
  return out;
}
/** Indirect JMPs that each write a 3-byte TIP (IPBytes 001), alternating targets. */
function tips(t: ReturnType<typeof make>, n: number): void {
  for (let i = 0; i < n; i++) t.g.branchIndirect('jmp', BASE, BASE + 2, BASE + 0x100 + (i & 1) * 0x100);
}

describe('PSB+ cadence by PacketByteCnt', () => {
  test('with PSBFreq = 0 a PSB+ starts where the count reaches 2048, after the event that crossed it', () => {
    const t = started();               // enable: 29 bytes
    tips(t, 672);                      // 29 + 3·672 = 2045
    expect(psbOffsets(t.bytes())).toEqual([0]);
    tips(t, 1);                        // 2048: floor(cnt / 2048) changes
    expect(psbOffsets(t.bytes())).toEqual([0, 2048]);
  });

  test('the next PSB+ is due at the next multiple of the period, not a period after the last PSB', () => {
    const t = started();
    tips(t, 673 + 672);                // 2048 + 29 (PSB+) + 3·672 = 4093, then 4096
    expect(psbOffsets(t.bytes())).toEqual([0, 2048]);
    tips(t, 1);
    expect(psbOffsets(t.bytes())).toEqual([0, 2048, 4096]);
  });

  test('a PSB+ with PacketEn = 1 is PSB, CBR, MODE.Exec, FUP(IP compressed against 0), PSBEND and resets LastIP', () => {
    const t = started();
    tips(t, 673);
    const after = tokens(t.bytes().subarray(2048));
    expect(after).toEqual(['psb', 'cbr 32', 'mode.exec 64', 'fup 2 0x10000100', 'psbend']);
  });

  test('the first TIP after a PSB+ is compressed against its FUP', () => {
    const t = started();
    tips(t, 673);
    t.next();
    t.g.branchIndirect('jmp', BASE, BASE + 2, BASE + 0x4000);
    expect(t.next()).toEqual(['tip 1 0x4000']);
  });

  test('a PSB+ never splits a compound event: it follows the TIP that ends the FUP', () => {
    const t = started();
    tips(t, 672);                      // 2045
    t.g.interrupt('external', BASE, BASE + 2, BASE + 0x300, 3, 0, 1);   // FUP crosses 2048
    const b = t.bytes();
    expect(psbOffsets(b)).toEqual([0, 2051]);
    expect(tokens(b.subarray(2045, 2051))).toEqual(['fup 1 0x2', 'tip 1 0x300']);
  });

  test('the count continues from the PacketByteCnt in STATUS (cumulative, not reset at enable)', () => {
    const t = make();
    t.g.traceEnable(BASE, regs(USER_BRANCHES, { PacketByteCnt: 2040 }));   // + 11 bytes crosses 2048
    expect(t.all()).toEqual([
      'cbr 32', 'mode.exec 64', 'tip.pge 2 0x10000000',
      'psb', 'cbr 32', 'mode.exec 64', 'fup 2 0x10000000', 'psbend',
    ]);
  });

  test('PacketByteCnt wraps modulo 2^17 and the wrap is a threshold crossing', () => {
    const t = make();
    t.g.traceEnable(BASE, regs({ ...USER_BRANCHES, PSBFreq: 5 }, { PacketByteCnt: 131070 }));
    expect(psbOffsets(t.bytes())).toEqual([11]);
    expect(t.g.status().PacketByteCnt).toBe((131070 + 11 + 29) % 131072);
  });

  test('the RET stack is cleared at a PSB', () => {
    const t = started();
    t.g.branchDirect('call', BASE, BASE + 5, BASE + 0x100);
    tips(t, 673);
    t.next();
    t.g.ret(BASE + 0x100, BASE + 0x101, BASE + 5);
    expect(t.next()).toEqual(['tip 1 0x5']);
  });

  test('a PSB+ while PacketEn = 0 has no MODE.Exec and no FUP', () => {
    const t = make({ context: { cpl: 0, cr3: 0, mode: 1 } });
    t.g.traceEnable(BASE, regs(USER_BRANCHES, { PacketByteCnt: 2046 }));   // CBR: 2050
    expect(t.all()).toEqual(['cbr 32', 'psb', 'cbr 32', 'psbend']);
  });
});

describe('PendPSB (output.md §7.4)', () => {
  test('without InjectPsbPmiOnEnable a PSB due at the disable is not kept', () => {
    const t = make();
    t.g.traceEnable(BASE, regs(USER_BRANCHES, { PacketByteCnt: 2030 }));   // 2041
    t.g.branchIndirect('jmp', BASE, BASE + 2, BASE + 0x7000);              // 2044
    t.g.traceDisable(BASE + 0x7000);                                        // 2048
    expect(t.g.status()).toMatchObject({ PendPSB: false, PacketByteCnt: 2048 });
  });

  test('PendPSB is set when the disable packets cross the threshold', () => {
    const ctl = { ...USER_BRANCHES, InjectPsbPmiOnEnable: true };
    const t = make();
    t.g.traceEnable(BASE, regs(ctl, { PacketByteCnt: 2030 }));   // 2041 after the enable
    t.next();
    t.g.branchIndirect('jmp', BASE, BASE + 2, BASE + 0x7000);    // 2044
    t.g.traceDisable(BASE + 0x7000);                              // 2048: due, but TraceEn is 0 now
    expect(t.g.status()).toMatchObject({ PendPSB: true, PacketByteCnt: 2048 });
    const status = { PacketByteCnt: 2048, PendPSB: true };
    t.g.traceEnable(BASE, regs(ctl, status));
    expect(t.next()).toEqual(['tip 1 0x7000', 'fup 1 0x7000', 'tip.pgd 0', 'psb', 'cbr 32', 'psbend', 'mode.exec 64', 'tip.pge 2 0x10000000']);
    expect(t.g.status().PendPSB).toBe(false);
  });
});

describe('a PSB due inside the driver\'s handler (GeneratorOptions.deferPsbInHandler)', () => {
  const ctl = { ...USER_BRANCHES, InjectPsbPmiOnEnable: true };
  /** Enabled at PacketByteCnt 2030 (2041 after the enable), then 2044 after one TIP: the handler entry's FUP + TIP.PGD cross 2048. */
  function intoHandler(opts: Partial<Parameters<typeof make>[0]>, c: CtlFields = ctl) {
    const t = make(opts);
    t.g.traceEnable(BASE, regs(c, { PacketByteCnt: 2030 }));
    t.g.branchIndirect('jmp', BASE, BASE + 2, BASE + 0x7000);
    t.next();
    t.g.untracedEnter(BASE + 0x7000);
    return t;
  }

  test('by default the PSB+ is written at once, in the handler', () => {
    const t = intoHandler({});
    expect([t.next(), t.g.status().PendPSB]).toEqual([['fup 1 0x7000', 'tip.pgd 0', 'psb', 'cbr 32', 'psbend'], false]);
  });

  test('deferred, it waits in PendPSB and is the first thing written when the handler returns', () => {
    const t = intoHandler({ deferPsbInHandler: true });
    expect([t.next(), t.g.status().PendPSB]).toEqual([['fup 1 0x7000', 'tip.pgd 0'], true]);
    t.g.untracedExit(BASE + 0x7000);
    expect([t.next(), t.g.status().PendPSB]).toEqual([['psb', 'cbr 32', 'psbend', 'mode.exec 64', 'tip.pge 2 0x10007000'], false]);
  });

  test('deferred and TraceEn cleared in the handler: kept in PendPSB and written first at the next enable', () => {
    const t = intoHandler({ deferPsbInHandler: true });
    t.g.traceDisable(BASE + 0x7000);
    const status = t.g.status();
    expect(status).toMatchObject({ PendPSB: true });
    t.next();
    t.g.traceEnable(BASE + 0x7000, regs(ctl, { PacketByteCnt: status.PacketByteCnt, PendPSB: true }));
    expect(t.next().slice(0, 3)).toEqual(['psb', 'cbr 32', 'psbend']);
  });

  test('deferred without InjectPsbPmiOnEnable, a TraceEn 1→0 in the handler loses it', () => {
    const t = intoHandler({ deferPsbInHandler: true }, USER_BRANCHES);
    t.g.traceDisable(BASE + 0x7000);
    const status = t.g.status();
    t.next();
    t.g.traceEnable(BASE + 0x7000, regs(USER_BRANCHES, { PacketByteCnt: status.PacketByteCnt }));
    expect([status.PendPSB, t.next().includes('psb')]).toEqual([false, false]);
  });
});
