// Ground truth in flow JSON Lines (docs/formats/flow-json.md): keys in spec order, no spaces.
import { describe, expect, test } from 'vitest';
import { BASE, make, regs, USER_BRANCHES } from './harness.js';

function traced(opts = {}) {
  const t = make({ truth: true, ...opts });
  t.g.traceEnable(BASE, regs(USER_BRANCHES));
  return t;
}

describe('truth records', () => {
  test('are off by default', () => {
    expect(make().g.truth).toBeNull();
  });

  test('a traced run gives enable, one record per branch, and disable', () => {
    const t = traced();
    t.g.branchJcc(BASE, BASE + 2, BASE + 0x10, false);
    t.g.branchJcc(BASE + 2, BASE + 4, BASE + 0x10, true);
    t.g.branchDirect('call', BASE + 0x10, BASE + 0x15, BASE + 0x100);
    t.g.ret(BASE + 0x100, BASE + 0x101, BASE + 0x15);
    t.g.branchIndirect('jmp', BASE + 0x15, BASE + 0x17, BASE + 0x200);
    t.g.traceDisable(BASE + 0x200);
    expect(t.g.truth!.text()).toBe([
      '{"kind":"enable","ip":"0x10000000"}',
      '{"ip":"0x10000000","kind":"jcc","taken":false,"to":"0x10000002"}',
      '{"ip":"0x10000002","kind":"jcc","taken":true,"to":"0x10000010"}',
      '{"ip":"0x10000010","kind":"call","to":"0x10000100"}',
      '{"ip":"0x10000100","kind":"ret","to":"0x10000015"}',
      '{"ip":"0x10000015","kind":"jmp","to":"0x10000200"}',
      '{"kind":"disable"}',
      '',
    ].join('\n'));
  });

  test('a far transfer into an untraced ring has no "to", then a disable without ip', () => {
    const t = traced();
    t.g.farTransfer('syscall', BASE, BASE + 2, -0x7f000000, 0, 0, 1);
    expect(t.g.truth!.lines().slice(1)).toEqual(['{"ip":"0x10000000","kind":"far.call"}', '{"kind":"disable"}']);
  });

  test('an interrupt into a traced handler is an async record with a kernel IP in full', () => {
    const t = make({ truth: true });
    t.g.traceEnable(BASE, regs({ ...USER_BRANCHES, OS: true }));
    t.g.interrupt('external', BASE + 0x10, BASE + 0x12, -0x7f000000, 0, 0, 1);
    expect(t.g.truth!.lines()[1]).toBe('{"kind":"async","from":"0x10000012","to":"0xffffffff81000000"}');
  });

  test('the untraced handler gives disable and enable records', () => {
    const t = traced();
    t.g.untracedEnter(BASE + 0x30);
    t.g.untracedExit(BASE + 0x30);
    expect(t.g.truth!.lines().slice(1)).toEqual(['{"kind":"disable"}', '{"kind":"enable","ip":"0x10000030"}']);
  });

  test('an overflow gives an overflow record with the resume IP and no records for lost branches', () => {
    const t = make({ truth: true, buffer: { capacity: 64, drainBytesPerCycle: 0.25 }, clock: { cyclesPerBranch: 0 } });
    t.g.traceEnable(BASE, regs(USER_BRANCHES));
    for (let i = 0; i < 12; i++) t.g.branchIndirect('jmp', BASE, BASE + 2, BASE + 0x100 + (i & 1) * 0x100);
    t.g.branchIndirect('jmp', BASE, BASE + 2, BASE + 0x400);   // lost
    t.g.instructions(1000);
    t.g.branchIndirect('jmp', BASE, BASE + 2, BASE + 0x500);
    const lines = t.g.truth!.lines();
    expect(lines.length).toBe(1 + 11 + 1);
    expect(lines.at(-1)).toBe('{"kind":"overflow","ip":"0x10000500"}');
  });
});
