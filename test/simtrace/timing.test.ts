// docs/sdm/packets.md §3.7–§3.11 and §13: TSC, TMA, CBR, MTC, CYC on the modelled clock
// (defaults: TSC = core cycles, ART = TSC / 2; 2 cycles per branch, 1 per instruction).
import { describe, expect, test } from 'vitest';
import { BASE, make, regs, USER_BRANCHES, type CtlFields } from './harness.js';

function on(ctl: CtlFields, opts = {}) {
  const t = make(opts);
  t.g.traceEnable(BASE, regs({ ...USER_BRANCHES, ...ctl }, { PacketByteCnt: 100 }));
  t.next();
  return t;
}

describe('PSB+ timing contents (§8 model order)', () => {
  test('PSB, TSC, TMA, CBR, PSBEND with TSCEn and MTCEn', () => {
    const t = make({ clock: { tscStart: 0x20, cbr: 40 } });
    t.g.traceEnable(BASE, regs({ ...USER_BRANCHES, TSCEn: true, MTCEn: true }));
    // TSC 0x20, ART = 0x10, FastCounter 0; CBR as configured.
    expect(t.all().slice(0, 5)).toEqual(['psb', 'tsc 0x20', 'tma 16 0', 'cbr 40', 'psbend']);
  });
});

describe('MTC (§3.9)', () => {
  test('with MTCFreq = 0 an MTC is written at every ART tick, CTC = ART[7:0]', () => {
    const t = on({ MTCEn: true });
    t.g.instructions(4);              // cycles 4 → ART 2
    expect(t.next()).toEqual(['mtc 1', 'mtc 2']);
  });

  test('with MTCFreq = 3 an MTC is written every 8 ART ticks, CTC = ART[10:3]', () => {
    const t = on({ MTCEn: true, MTCFreq: 3 });
    t.g.instructions(40);             // ART 20: edges at 8 and 16
    expect(t.next()).toEqual(['mtc 1', 'mtc 2']);
  });

  test('an MTC does not force a pending TNT out', () => {
    const t = on({ MTCEn: true });
    t.g.branchJcc(BASE, BASE + 2, BASE + 0x10, true);    // cycle 2: the ART 1 MTC comes after the branch
    t.g.traceDisable(BASE + 0x10);
    expect(t.next()).toEqual(['mtc 1', 'tnt T', 'fup 1 0x10', 'tip.pgd 0']);
  });
});

describe('CYC (§3.11)', () => {
  test('a CYC before a TIP gives the cycles since the last CYC (the enable restarts the count)', () => {
    const t = on({ CYCEn: true });
    t.g.instructions(10);
    t.g.branchIndirect('jmp', BASE, BASE + 2, BASE + 0x40);   // cycle 12
    expect(t.next()).toEqual(['cyc 12', 'tip 1 0x40']);
  });

  test('a CYC before a TNT gives the time of its first branch', () => {
    const t = on({ CYCEn: true });
    t.g.instructions(10);
    t.g.branchIndirect('jmp', BASE, BASE + 2, BASE + 0x40);   // 12
    t.g.branchJcc(BASE + 0x40, BASE + 0x42, BASE + 0x50, true); // 14
    t.g.instructions(5);
    t.g.branchJcc(BASE + 0x50, BASE + 0x52, BASE + 0x60, true); // 21
    t.g.branchIndirect('jmp', BASE + 0x60, BASE + 0x62, BASE + 0x80); // 23
    expect(t.next()).toEqual(['cyc 12', 'tip 1 0x40', 'cyc 2', 'tnt TT', 'cyc 9', 'tip 1 0x80']);
  });

  test('no CYC before the CycThresh minimum has elapsed (CycThresh = 5 → 16 cycles)', () => {
    const t = on({ CYCEn: true, CycThresh: 5 });
    t.g.instructions(10);
    t.g.branchIndirect('jmp', BASE, BASE + 2, BASE + 0x40);   // 12 < 16
    t.g.instructions(10);
    t.g.branchIndirect('jmp', BASE, BASE + 2, BASE + 0x80);   // 24 ≥ 16
    expect(t.next()).toEqual(['tip 1 0x40', 'cyc 24', 'tip 1 0x80']);
  });

  test('a FUP gets no CYC of its own (FUP is not CYC-eligible)', () => {
    const t = on({ CYCEn: true });
    t.g.instructions(10);
    t.g.traceDisable(BASE + 0x40);
    expect(t.next()).toEqual(['fup 1 0x40', 'cyc 10', 'tip.pgd 0']);
  });
});
