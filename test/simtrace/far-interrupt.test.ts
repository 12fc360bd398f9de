// docs/sdm/packets.md §10 far-transfer, interrupt/exception and PTWRITE rows; §11 FUP IPs;
// docs/design.md "How the model runs" (the untraced handler).
import { describe, expect, test } from 'vitest';
import { BASE, make, regs, started, USER_BRANCHES } from './harness.js';

const KERNEL = -0x7f000000;               // 0xffffffff81000000
const ALL = { OS: true, User: true, BranchEn: true, ToPA: true };
const user = { cpl: 3, cr3: 0x1000, mode: 1 as const };

describe('far transfers', () => {
  test('1→1 writes PIP(new CR3), MODE.Exec(new mode), TIP(BLIP) and no FUP', () => {
    const t = started(ALL, { context: user });
    t.g.farTransfer('far.call', BASE, BASE + 7, 0x20000000, 3, 0x3000, 2);
    expect(t.next()).toEqual(['pip 0x3000', 'mode.exec 32', 'tip 2 0x20000000']);
  });

  test('1→1 without a CR3 or mode change writes TIP(BLIP) only', () => {
    const t = started(ALL, { context: user });
    t.g.farTransfer('iret', BASE, BASE + 2, BASE + 0x80, 3, 0x1000, 1);
    expect(t.next()).toEqual(['tip 1 0x80']);
  });

  test('0→0 with ContextEn = 1 after (FilterEn = 0) writes PIP only', () => {
    const t = make({ context: user });
    const far = BASE + 0x10000;
    t.g.traceEnable(far, regs({ ...ALL, ADDR0_CFG: 1 }, {}, { addrA: [BigInt(BASE)], addrB: [BigInt(BASE + 0xfff)] }));
    t.next();
    t.g.farTransfer('far.jmp', far, far + 7, far + 0x100, 3, 0x4000, 1);
    expect(t.next()).toEqual(['pip 0x4000']);
  });
});

describe('interrupts and exceptions (FUP IP per §11)', () => {
  test('a hardware interrupt 1→1 writes FUP(NLIP), PIP?, TIP(handler)', () => {
    const t = started(ALL, { context: user });
    t.g.interrupt('external', BASE + 0x10, BASE + 0x12, KERNEL, 0, 0x9000, 1);
    expect(t.next()).toEqual(['fup 1 0x12', 'pip 0x9000', 'tip 3 0xffff81000000']);
  });

  test.for([
    { kind: 'software', fup: 'fup 1 0x10', row: 'INT n: FUP(CLIP)' },
    { kind: 'fault', fup: 'fup 1 0x10', row: 'fault: FUP(CLIP)' },
    { kind: 'trap', fup: 'fup 1 0x12', row: 'trap: FUP(NLIP)' },
    { kind: 'nmi', fup: 'fup 1 0x12', row: 'NMI: FUP(NLIP)' },
  ] as const)('$row', ({ kind, fup }) => {
    const t = started(ALL, { context: user });
    t.g.interrupt(kind, BASE + 0x10, BASE + 0x12, KERNEL, 0, 0x1000, 1);
    expect(t.next()).toEqual([fup, 'tip 3 0xffff81000000']);
  });

  test('a handler that is not traced gives FUP(NLIP), TIP.PGD()', () => {
    const t = started(USER_BRANCHES, { context: user });
    t.g.interrupt('external', BASE + 0x10, BASE + 0x12, KERNEL, 0, 0x1000, 1);
    expect(t.next()).toEqual(['fup 1 0x12', 'tip.pgd 0']);
  });

  test('an interrupt into a traced context writes PIP?, MODE.Exec, TIP.PGE(handler) and no FUP', () => {
    const t = started({ OS: true, BranchEn: true, ToPA: true }, { context: user });   // CPL 3 is not traced
    t.g.interrupt('external', BASE + 0x10, BASE + 0x12, KERNEL, 0, 0x9000, 1);
    expect(t.next()).toEqual(['pip 0x9000', 'mode.exec 64', 'tip.pge 3 0xffff81000000']);
  });
});

describe('the untraced driver handler (docs/design.md)', () => {
  test('PMI entry writes FUP(NLIP), TIP.PGD(); TraceEn 1→0 inside writes nothing; 0→1 writes timing; the return writes MODE.Exec, TIP.PGE(NLIP)', () => {
    const t = started();
    t.g.untracedEnter(BASE + 0x30);
    expect(t.next()).toEqual(['fup 1 0x30', 'tip.pgd 0']);
    t.g.traceDisable(0);
    expect(t.next()).toEqual([]);
    t.g.traceEnable(0, regs(USER_BRANCHES, { PacketByteCnt: t.g.status().PacketByteCnt }));
    expect(t.next()).toEqual(['cbr 32']);
    t.g.untracedExit(BASE + 0x30);
    expect(t.next()).toEqual(['mode.exec 64', 'tip.pge 1 0x30']);
  });
});

describe('PTWRITE (§3.16)', () => {
  test('with FUPonPTW = 1 writes PTW(IP=1) then FUP(IP of the PTWRITE)', () => {
    const t = started({ ...USER_BRANCHES, PTWEn: true, FUPonPTW: true });
    t.g.ptwrite(BASE + 0x20, 0x1122334455667788n, 8);
    expect(t.next()).toEqual(['ptw 8 0x1122334455667788 ip', 'fup 1 0x20']);
  });

  test('with BranchEn = 0 PTW is still written', () => {
    const t = started({ User: true, ToPA: true, PTWEn: true });
    t.g.ptwrite(BASE + 0x20, 0xdeadbeefn, 4);
    expect(t.next()).toEqual(['ptw 4 0xdeadbeef']);
  });

  test('with PTWEn = 0 nothing is written', () => {
    const t = started();
    t.g.ptwrite(BASE + 0x20, 1n, 4);
    expect(t.next()).toEqual([]);
  });
});
