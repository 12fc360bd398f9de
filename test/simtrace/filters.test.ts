// docs/sdm/README.md §2–§4 (PacketEn, CPL/CR3 filtering, IP filtering, TraceStop)
// and the matching docs/sdm/packets.md §10 rows.
import { describe, expect, test } from 'vitest';
import { BASE, make, regs, started, USER_BRANCHES, type CtlFields } from './harness.js';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';

const IN = BASE;                 // filter range [BASE, BASE+0xfff]
const OUT = BASE + 0x2000;
const STOP = BASE + 0x800;       // TraceStop range [BASE+0x800, BASE+0x8ff] (overlaps the filter range)
const ranged = { addrA: [BigInt(BASE), BigInt(STOP)], addrB: [BigInt(BASE + 0xfff), BigInt(STOP + 0xff)] };
const FILTER = { ...USER_BRANCHES, ADDR0_CFG: 1 };
const FILTER_AND_STOP = { ...FILTER, ADDR1_CFG: 2 };

/** Enabled with the ranges above at `at`; enable packets consumed. */
function inRanges(at: number, ctl: CtlFields = FILTER_AND_STOP, opts = {}) {
  const t = make(opts);
  t.g.traceEnable(at, regs(ctl, {}, ranged));
  const first = t.next();
  return { ...t, first };
}

describe('CPL filtering (README §3.1)', () => {
  test('SYSCALL into the untraced kernel writes TIP.PGD() with the IP suppressed', () => {
    const t = started();
    t.g.farTransfer('syscall', BASE, BASE + 2, -0x7f000000, 0, 0, 1);
    expect(t.next()).toEqual(['tip.pgd 0']);
  });

  test('SYSRET back to the traced ring writes MODE.Exec, TIP.PGE(user return)', () => {
    const t = started();
    t.g.farTransfer('syscall', BASE, BASE + 2, -0x7f000000, 0, 0, 1);
    t.g.farTransfer('sysret', -0x7effff00, -0x7efffefd, BASE + 2, 3, 0, 1);
    expect(t.next()).toEqual(['tip.pgd 0', 'mode.exec 64', 'tip.pge 1 0x2']);
  });

  test('OS = User = 0 keeps ContextEn = 0 in every ring', () => {
    const t = make();
    t.g.traceEnable(BASE, regs({ BranchEn: true, ToPA: true }));
    t.g.farTransfer('syscall', BASE, BASE + 2, -0x7f000000, 0, 0, 1);
    expect(t.all()).toEqual(['psb', 'cbr 32', 'psbend']);
    expect(t.g.status().ContextEn).toBe(false);
  });
});

describe('CR3 filtering (README §3.2; §10 MOV to CR3 rows)', () => {
  const kernel = { cpl: 0, cr3: 0x5000, mode: 1 as const };
  const ctl = { OS: true, BranchEn: true, ToPA: true, CR3Filter: true };
  const cr3Match = { cr3Match: 0x5000n };

  test('MOV to CR3 with a matching CR3 writes PIP(new) (1→1)', () => {
    const t = started({ OS: true, BranchEn: true, ToPA: true }, { context: kernel });
    t.g.movCr3(BASE, BASE + 3, 0x7000);
    expect(t.next()).toEqual(['pip 0x7000']);
  });

  test('MOV to CR3 that stops matching writes TIP.PGD() (1→0)', () => {
    const t = started(ctl, { context: kernel }, cr3Match);
    t.g.movCr3(BASE, BASE + 3, 0x6000);
    expect(t.next()).toEqual(['tip.pgd 0']);
  });

  test('MOV to CR3 that matches again writes PIP(new), MODE.Exec, TIP.PGE(NLIP) (0→1); bits 11:0 are ignored', () => {
    const t = started(ctl, { context: kernel }, cr3Match);
    t.g.movCr3(BASE, BASE + 3, 0x6000);
    t.g.movCr3(BASE + 0x10, BASE + 0x13, 0x5123);
    expect(t.next()).toEqual(['tip.pgd 0', 'pip 0x5000', 'mode.exec 64', 'tip.pge 1 0x13']);
  });
});

describe('IP filtering (README §4; [SDM16] Table 36-2)', () => {
  test('enabling outside the range writes PSB+ only; FilterEn = 0', () => {
    const t = inRanges(OUT);
    expect(t.first).toEqual(['psb', 'cbr 32', 'psbend']);
    expect(t.g.status().FilterEn).toBe(false);
  });

  test('the SDM example: jmp into the range, jcc not taken, direct jmp out', () => {
    const t = inRanges(OUT, FILTER);
    t.g.branchDirect('jmp', OUT, OUT + 5, IN);                 // Bar: jmp RangeBase
    t.g.branchJcc(IN, IN + 2, IN + 0x10, false);               // jcc Foo, not taken
    t.g.branchDirect('jmp', IN + 0x10, IN + 0x15, BASE + 0x1000); // jmp RangeLimit+1
    expect(t.next()).toEqual(['mode.exec 64', 'tip.pge 2 0x10000000', 'tnt N', 'tip.pgd 1 0x1000']);
  });

  test('a taken jcc leaving the range writes [TNT], TIP.PGD() and no TNT bit for itself', () => {
    const t = inRanges(IN, FILTER);
    t.g.branchJcc(IN, IN + 2, IN + 0x10, false);
    t.g.branchJcc(IN + 0x10, IN + 0x12, OUT, true);
    expect(t.next()).toEqual(['tnt N', 'tip.pgd 0']);
  });

  test('libiptCompat writes TIP.PGD(BLIP) for a taken jcc leaving the range', () => {
    const t = inRanges(IN, FILTER, { libiptCompat: true });
    t.g.branchJcc(IN + 0x10, IN + 0x12, OUT, true);
    expect(t.next()).toEqual(['tip.pgd 1 0x2000']);
  });

  test('a RET that would have been compressed writes TIP.PGD(BLIP) when it leaves the range', () => {
    const t = inRanges(IN, FILTER);
    // A CALL in the last 5 bytes of the range: its return address lies just outside.
    t.g.branchDirect('call', BASE + 0xffb, BASE + 0x1000, IN + 0x100);
    t.g.ret(IN + 0x100, IN + 0x101, BASE + 0x1000);
    expect(t.next()).toEqual(['tip.pgd 1 0x1000']);
  });

  test('an indirect JMP leaving the range writes TIP.PGD(BLIP); one entering writes MODE.Exec, TIP.PGE(BLIP)', () => {
    const t = inRanges(IN, FILTER);
    t.g.branchIndirect('jmp', IN, IN + 2, OUT);
    t.g.branchIndirect('jmp', OUT, OUT + 2, IN + 0x40);
    expect(t.next()).toEqual(['tip.pgd 1 0x2000', 'mode.exec 64', 'tip.pge 1 0x40']);
  });

  test('a taken jcc entering the range writes MODE.Exec, TIP.PGE(BLIP)', () => {
    const t = inRanges(OUT, FILTER);
    t.g.branchJcc(OUT, OUT + 2, IN + 0x40, true);
    expect(t.next()).toEqual(['mode.exec 64', 'tip.pge 2 0x10000040']);
  });

  test('falling through the range limit does not change FilterEn', () => {
    const t = inRanges(BASE + 0xffe, FILTER);
    t.g.branchJcc(BASE + 0xffe, BASE + 0x1000, IN, false);   // not taken: now executing outside the range
    t.g.branchJcc(BASE + 0x1000, BASE + 0x1002, BASE + 0x1100, false);
    t.g.traceDisable(BASE + 0x1002);
    expect(t.next()).toEqual(['tnt NN', 'fup 1 0x1002', 'tip.pgd 0']);
  });

  test('an interrupt whose handler is outside the range writes FUP(NLIP), TIP.PGD(handler)', () => {
    const t = inRanges(IN, { ...FILTER, OS: true });
    t.g.interrupt('external', IN + 0x10, IN + 0x12, OUT, 0, 0, 1);
    expect(t.next()).toEqual(['fup 1 0x12', 'tip.pgd 1 0x2000']);
  });
});

describe('TraceStop (README §4.4)', () => {
  test('a direct JMP landing in a TraceStop range writes TIP.PGD(BLIP), TraceStop and sets Stopped', () => {
    const t = inRanges(IN);
    t.g.branchDirect('jmp', IN, IN + 5, STOP + 4);
    t.g.branchIndirect('jmp', STOP + 4, STOP + 6, IN);
    expect(t.next()).toEqual(['tip.pgd 1 0x804', 'stop']);
    expect(t.g.status()).toMatchObject({ Stopped: true, TriggerEn: false, FilterEn: false });
  });

  test('a taken jcc landing in a TraceStop range writes TIP.PGD() then TraceStop', () => {
    const t = inRanges(IN);
    t.g.branchJcc(IN, IN + 2, STOP, true);
    expect(t.next()).toEqual(['tip.pgd 0', 'stop']);
  });

  test('with FilterEn = 0 (ContextEn = 1) a hit writes only TraceStop', () => {
    const t = inRanges(OUT);
    t.g.branchIndirect('jmp', OUT, OUT + 2, STOP);
    expect(t.next()).toEqual(['stop']);
  });

  test('TraceStop wins where it overlaps a filter range', () => {
    const t = inRanges(IN);
    t.g.branchIndirect('jmp', IN, IN + 2, STOP + 0xff);
    expect(t.next()).toEqual(['tip.pgd 1 0x8ff', 'stop']);
  });

  test('MOV to CR3 executed in a TraceStop range writes PIP(new), TIP.PGD(NLIP), TraceStop', () => {
    const t = make({ context: { cpl: 0, cr3: 0x1000, mode: 1 } });
    const ctl = IA32_RTIT_CTL.encode({ TraceEn: true, OS: true, BranchEn: true, ToPA: true, ADDR0_CFG: 2 });
    t.g.traceEnable(IN, { ctl, status: 0n, addrA: [BigInt(STOP)], addrB: [BigInt(STOP + 0xff)] });
    t.next();
    t.g.movCr3(STOP + 0x10, STOP + 0x13, 0x2000);
    expect(t.next()).toEqual(['pip 0x2000', 'tip.pgd 1 0x813', 'stop']);
  });

  test('a TraceStop tells the sink, after its last byte, that no more bytes come (docs/sdm/output.md §4.5)', () => {
    const t = inRanges(IN);
    const seen: string[] = [];
    const put = t.sink.put.bind(t.sink);
    t.sink.put = (buf, start, end) => { seen.push(`put ${end - start}`); put(buf, start, end); };
    (t.sink as { traceStopped?: () => void }).traceStopped = () => seen.push('stopped');
    t.g.branchJcc(IN, IN + 2, STOP, true);
    expect(seen.at(-1)).toBe('stopped');
    expect(seen.filter((x) => x === 'stopped')).toHaveLength(1);
    expect(t.next()).toEqual(['tip.pgd 0', 'stop']);
  });

  test('a TraceStop range alone does not filter: branches elsewhere are traced', () => {
    const t = make();
    const ctl = IA32_RTIT_CTL.encode({ TraceEn: true, User: true, BranchEn: true, ToPA: true, ADDR0_CFG: 2 });
    t.g.traceEnable(OUT, { ctl, status: 0n, addrA: [BigInt(STOP)], addrB: [BigInt(STOP + 0xff)] });
    t.next();
    t.g.branchIndirect('jmp', OUT, OUT + 2, IN);
    expect(t.next()).toEqual(['tip 1 0x0']);
  });
});
