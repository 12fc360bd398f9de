// docs/sdm/packets.md §7: RET compression, CPU side.
import { describe, expect, test } from 'vitest';
import { RET_STACK_DEPTH, RetStack } from '../../harness/sim/trace/ret-stack.js';
import { BASE, started, USER_BRANCHES } from './harness.js';

describe('RetStack', () => {
  test('a RET whose target is the top entry matches', () => {
    const s = new RetStack();
    s.push(0x100);
    s.push(0x200);
    expect(s.popMatches(0x200)).toBe(true);
    expect(s.popMatches(0x100)).toBe(true);
  });

  test('an unmatched RET still pops the entry (SDM §7 step 3)', () => {
    const s = new RetStack();
    s.push(0x100);
    s.push(0x200);
    expect(s.popMatches(0x999)).toBe(false);
    expect(s.popMatches(0x100)).toBe(true);
  });

  test('an empty stack never matches', () => {
    expect(new RetStack().popMatches(0)).toBe(false);
  });

  test('the oldest entry drops off when a 65th CALL is pushed', () => {
    const s = new RetStack();
    for (let i = 1; i <= 65; i++) s.push(i);
    expect(RET_STACK_DEPTH).toBe(64);
    for (let i = 65; i >= 2; i--) expect(s.popMatches(i)).toBe(true);
    expect(s.depth).toBe(0);
    expect(s.popMatches(1)).toBe(false);
  });
});

describe('RET compression in the generator', () => {
  test('a RET to the Next IP of a traced CALL is one TNT "1"', () => {
    const t = started();
    t.g.branchDirect('call', BASE, BASE + 5, BASE + 0x100);
    t.g.ret(BASE + 0x100, BASE + 0x101, BASE + 5);
    t.g.branchIndirect('jmp', BASE + 5, BASE + 7, BASE + 0x1234);
    expect(t.next()).toEqual(['tnt T', 'tip 1 0x1234']);
  });

  test('an indirect CALL is pushed too', () => {
    const t = started();
    t.g.branchIndirect('call', BASE, BASE + 2, BASE + 0x100);
    t.g.ret(BASE + 0x100, BASE + 0x101, BASE + 2);
    t.g.traceDisable(BASE + 2);
    expect(t.next()).toEqual(['tip 1 0x100', 'tnt T', 'fup 1 0x2', 'tip.pgd 0']);
  });

  test('a RET to an edited return address is a TIP', () => {
    const t = started();
    t.g.branchDirect('call', BASE, BASE + 5, BASE + 0x100);
    t.g.ret(BASE + 0x100, BASE + 0x101, BASE + 0x300);
    expect(t.next()).toEqual(['tip 1 0x300']);
  });

  test('a RET with no traced CALL is a TIP', () => {
    const t = started();
    t.g.ret(BASE + 0x100, BASE + 0x101, BASE + 0x300);
    expect(t.next()).toEqual(['tip 1 0x300']);
  });

  test('a zero-length CALL (E8 00000000) is not pushed', () => {
    const t = started();
    t.g.branchDirect('call', BASE, BASE + 5, BASE + 5, true);
    t.g.ret(BASE + 0x100, BASE + 0x101, BASE + 5);
    expect(t.next()).toEqual(['tip 1 0x5']);
  });

  test('DisRETC = 1 turns compression off', () => {
    const t = started({ ...USER_BRANCHES, DisRETC: true });
    t.g.branchDirect('call', BASE, BASE + 5, BASE + 0x100);
    t.g.ret(BASE + 0x100, BASE + 0x101, BASE + 5);
    expect(t.next()).toEqual(['tip 1 0x5']);
  });

  test('with 65 nested CALLs only 64 RETs are compressed', () => {
    const t = started();
    for (let i = 0; i < 65; i++) t.g.branchDirect('call', BASE + i * 0x10, BASE + i * 0x10 + 5, BASE + (i + 1) * 0x10);
    for (let i = 64; i >= 0; i--) t.g.ret(BASE + 0x1000, BASE + 0x1001, BASE + i * 0x10 + 5);
    // 64 "T" = ten full TNT-8s and four pending, forced out by the 65th RET's TIP(0x10000005).
    expect(t.next()).toEqual([...Array(10).fill('tnt TTTTTT'), 'tnt TTTT', 'tip 1 0x5']);
  });

  test('a RET is not compressed across a PacketEn 1→0→1 period', () => {
    const t = started();
    t.g.branchDirect('call', BASE, BASE + 5, BASE + 0x100);
    t.g.untracedEnter(BASE + 0x100);
    t.g.untracedExit(BASE + 0x100);
    t.g.ret(BASE + 0x100, BASE + 0x101, BASE + 5);
    expect(t.next()).toEqual(['fup 1 0x100', 'tip.pgd 0', 'mode.exec 64', 'tip.pge 1 0x100', 'tip 1 0x5']);
  });
});
