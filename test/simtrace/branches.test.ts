// docs/sdm/packets.md §10 branch rows, §6 TNT buffering, §5 IP compression policy.
import { describe, expect, test } from 'vitest';
import { BASE, started, USER_BRANCHES } from './harness.js';

const jcc = (t: ReturnType<typeof started>, taken: boolean, at = BASE): void =>
  t.g.branchJcc(at, at + 2, at + 0x40, taken);

describe('conditional branches (§10 "Conditional branch / compressed RET", §6)', () => {
  test('two results are written oldest first as TNT-8 0x0A when something forces them out', () => {
    const t = started();
    jcc(t, false);
    jcc(t, true);
    t.g.traceDisable(BASE);
    expect(t.bytes()[t.bytes().length - 5]).toBe(0x0a);   // docs/sdm/packets.md §3.2 example: 0x0A = "NT"
  });

  test('the TNT-8 is written as soon as 6 results have accumulated', () => {
    const t = started();
    for (const taken of [true, false, true, true, false, false]) jcc(t, taken);
    expect(t.next()).toEqual(['tnt TNTTNN']);
  });

  test('fewer than 6 results stay pending', () => {
    const t = started();
    for (let i = 0; i < 5; i++) jcc(t, true);
    expect(t.next()).toEqual([]);
  });

  test('a TIP forces a partial TNT out first', () => {
    const t = started();
    for (let i = 0; i < 7; i++) jcc(t, i % 2 === 0);
    t.g.branchIndirect('jmp', BASE + 0x100, BASE + 0x102, BASE + 0x1234);
    expect(t.next()).toEqual(['tnt TNTNTN', 'tnt T', 'tip 1 0x1234']);
  });

  test('DisTNT = 1 writes no TNT at all', () => {
    const t = started({ ...USER_BRANCHES, DisTNT: true });
    for (let i = 0; i < 8; i++) jcc(t, true);
    t.g.branchIndirect('jmp', BASE, BASE + 2, BASE + 0x1234);
    expect(t.next()).toEqual(['tip 1 0x1234']);
  });
});

describe('direct and indirect branches (§10)', () => {
  test('a direct JMP or CALL writes nothing', () => {
    const t = started();
    t.g.branchDirect('jmp', BASE, BASE + 5, BASE + 0x100);
    t.g.branchDirect('call', BASE + 0x100, BASE + 0x105, BASE + 0x200);
    expect(t.next()).toEqual([]);
  });

  test('an indirect CALL writes TIP(target)', () => {
    const t = started();
    t.g.branchIndirect('call', BASE, BASE + 2, BASE + 0x4000);
    expect(t.next()).toEqual(['tip 1 0x4000']);
  });

  test('BranchEn = 0 keeps PacketEn = 0: branches write nothing', () => {
    const t = started({ User: true, ToPA: true, BranchEn: false });
    t.g.branchIndirect('call', BASE, BASE + 2, BASE + 0x4000);
    jcc(t, true);
    t.g.traceDisable(BASE);
    expect(t.all()).toEqual(['psb', 'cbr 32', 'psbend']);
  });
});

describe('IP compression policy (§5)', () => {
  // After the enable, LastIP = 0x10000000 (the TIP.PGE).
  test.for([
    { to: 0x10001234, want: 'tip 1 0x1234', why: 'bits 63:16 equal → 001' },
    { to: 0x10ab0000, want: 'tip 2 0x10ab0000', why: 'bits 63:32 equal → 010' },
    { to: 0x7fff00001000, want: 'tip 3 0x7fff00001000', why: 'canonical-48 → 011' },
    { to: -0x7f000000, want: 'tip 3 0xffff81000000', why: 'kernel 0xffffffff81000000 is canonical-48 → 011' },
    { to: 0x800000000000, want: 'tip 4 0x800000000000', why: 'not canonical-48, bits 63:48 equal → 100' },
    { to: 0xff000000000000, want: 'tip 6 0xff000000000000', why: 'nothing matches → 110' },
  ])('$why', ({ to, want }) => {
    const t = started();
    t.g.branchIndirect('jmp', BASE, BASE + 2, to);
    expect(t.next()).toEqual([want]);
  });

  test('LastIP follows every IP packet', () => {
    const t = started();
    t.g.branchIndirect('jmp', BASE, BASE + 2, 0x7fff00001000);
    t.g.branchIndirect('jmp', 0x7fff00001000, 0x7fff00001002, 0x7fff00002000);
    expect(t.next()).toEqual(['tip 3 0x7fff00001000', 'tip 1 0x2000']);
  });

  test('a suppressed IP leaves LastIP unchanged', () => {
    const t = started();
    t.g.traceDisable(BASE + 0x10);             // FUP(0x10000010), TIP.PGD()
    t.g.traceEnable(BASE + 0x20, { ctl: (1n << 0n) | (1n << 3n) | (1n << 8n) | (1n << 13n), status: 100n << 32n });
    expect(t.next()).toEqual(['fup 1 0x10', 'tip.pgd 0', 'cbr 32', 'mode.exec 64', 'tip.pge 1 0x20']);
  });
});
