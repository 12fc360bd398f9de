// docs/sdm/packets.md §10, TraceEn rows ([SDM16] Table 36-50), and msrs.md §3.4.
import { describe, expect, test } from 'vitest';
import { BASE, make, regs, USER_BRANCHES } from './harness.js';

describe('TraceEn 0→1', () => {
  test('with PacketByteCnt = 0 and PacketEn 0→1 writes PSB+ without FUP/MODE.Exec, then MODE.Exec, TIP.PGE(NLIP)', () => {
    const t = make();
    t.g.traceEnable(BASE, regs());
    // LastIP = 0 after the PSB: 0x10000000 shares bits 63:32 with 0 → IPBytes 010.
    expect(t.all()).toEqual(['psb', 'cbr 32', 'psbend', 'mode.exec 64', 'tip.pge 2 0x10000000']);
  });

  test('with PacketByteCnt = 0 and PacketEn 0→0 writes PSB+ only', () => {
    const t = make({ context: { cpl: 0, cr3: 0x1000, mode: 1 } });
    t.g.traceEnable(BASE, regs());          // User only, CPL 0: ContextEn = 0
    expect(t.all()).toEqual(['psb', 'cbr 32', 'psbend']);
    expect(t.g.PacketEn).toBe(false);
  });

  test('with PacketByteCnt > 0 and PacketEn 0→1 writes TSC?, TMA?, CBR, MODE.Exec, TIP.PGE(NLIP)', () => {
    const t = make();
    t.g.traceEnable(BASE, regs(USER_BRANCHES, { PacketByteCnt: 100 }));
    expect(t.all()).toEqual(['cbr 32', 'mode.exec 64', 'tip.pge 2 0x10000000']);
  });

  test('with PacketByteCnt > 0 and PacketEn 0→0 writes CBR only', () => {
    const t = make();
    t.g.traceEnable(BASE, regs({ ...USER_BRANCHES, User: false, OS: true }, { PacketByteCnt: 100 }));
    expect(t.all()).toEqual(['cbr 32']);
  });

  test('with TSCEn and MTCEn writes TSC and TMA before CBR', () => {
    const t = make({ clock: { tscStart: 0x1000 } });
    t.g.traceEnable(BASE, regs({ ...USER_BRANCHES, TSCEn: true, MTCEn: true }, { PacketByteCnt: 100 }));
    // TSC 0x1000 at cycle 0; ART = TSC / 2 = 0x800; FastCounter 0.
    expect(t.all()).toEqual(['tsc 0x1000', 'tma 2048 0', 'cbr 32', 'mode.exec 64', 'tip.pge 2 0x10000000']);
  });

  test('with PendPSB = 1 and InjectPsbPmiOnEnable = 1 writes PSB+ although PacketByteCnt > 0', () => {
    const t = make();
    t.g.traceEnable(BASE, regs({ ...USER_BRANCHES, InjectPsbPmiOnEnable: true }, { PacketByteCnt: 100, PendPSB: true }));
    expect(t.all()).toEqual(['psb', 'cbr 32', 'psbend', 'mode.exec 64', 'tip.pge 2 0x10000000']);
    expect(t.g.status().PendPSB).toBe(false);
  });

  test('without L14.0.EBX[1] always writes PSB+', () => {
    const t = make({ psbCyc: false });
    t.g.traceEnable(BASE, regs(USER_BRANCHES, { PacketByteCnt: 100 }));
    expect(t.all()).toEqual(['psb', 'cbr 32', 'psbend', 'mode.exec 64', 'tip.pge 2 0x10000000']);
  });

  test('with STATUS.Stopped = 1 leaves TriggerEn = 0 and writes nothing', () => {
    const t = make();
    t.g.traceEnable(BASE, regs(USER_BRANCHES, { Stopped: true }));
    t.g.branchJcc(BASE, BASE + 2, BASE + 0x10, true);
    expect(t.all()).toEqual([]);
    expect(t.g.status().TriggerEn).toBe(false);
  });

  test('with OS = 1 and ContextEn = 1 puts PIP(CR3) into the PSB+', () => {
    const t = make({ context: { cpl: 0, cr3: 0x12345000, mode: 1 } });
    t.g.traceEnable(BASE, regs({ OS: true, BranchEn: true }));
    expect(t.all()).toEqual(['psb', 'pip 0x12345000', 'cbr 32', 'psbend', 'mode.exec 64', 'tip.pge 2 0x10000000']);
  });
});

describe('TraceEn 1→0', () => {
  test('with PacketEn = 1 writes [TNT], FUP(CLIP), TIP.PGD()', () => {
    const t = make();
    t.g.traceEnable(BASE, regs());
    t.next();
    t.g.branchJcc(BASE, BASE + 2, BASE + 0x10, true);
    t.g.traceDisable(BASE + 0x20);
    // FUP compressed against the TIP.PGE's 0x10000000: bits 63:16 equal → IPBytes 001.
    expect(t.next()).toEqual(['tnt T', 'fup 1 0x20', 'tip.pgd 0']);
    expect(t.g.status().TriggerEn).toBe(false);
  });

  test('with PacketEn = 0 writes nothing', () => {
    const t = make({ context: { cpl: 0, cr3: 0, mode: 1 } });
    t.g.traceEnable(BASE, regs());
    t.next();
    t.g.traceDisable(BASE + 0x20);
    expect(t.next()).toEqual([]);
  });

  test('PacketByteCnt counts every byte written', () => {
    const t = make();
    t.g.traceEnable(BASE, regs());
    t.g.traceDisable(BASE + 0x20);
    // PSB 16 + CBR 4 + PSBEND 2 + MODE 2 + TIP.PGE 5 + FUP 3 + TIP.PGD 1
    expect(t.g.status().PacketByteCnt).toBe(33);
    expect(t.bytes().length).toBe(33);
  });

  test('the status value keeps the bits the generator does not own', () => {
    const t = make();
    t.g.traceEnable(BASE, regs());
    t.g.traceDisable(BASE);
    const v = t.g.statusValue((1n << 7n) | 0x30n);   // PendTopaPMI, Error, Stopped from the caller
    expect(v & (1n << 7n)).toBe(1n << 7n);
    expect((v >> 32n) & 0x1ffffn).toBe(BigInt(t.bytes().length));
    expect(v & 0x30n).toBe(0n);                       // Error/Stopped are the generator's
  });
});
