// The generator's bytes read by libipt's packet decoder (the independent oracle,
// docs/design.md "Layers"): no errors, and the same packets as the test lister sees.
import { describe, expect, test } from 'vitest';
import { libiptTools, ptjsonOf } from '../libipt/tools.js';
import { BASE, make, regs, USER_BRANCHES } from './harness.js';
import { tokens } from './pkt.js';

const { tools, title } = libiptTools();

describe.skipIf(!tools)(title('libipt reads the generator output'), () => {
  test('a mixed run with PSBs, timing, PTW, filters and an overflow decodes without errors', async () => {
    const t = make({
      buffer: { capacity: 4096, drainBytesPerCycle: 0.5 }, context: { cpl: 3, cr3: 0x1000, mode: 1 },
    });
    t.g.traceEnable(BASE, regs({
      ...USER_BRANCHES, OS: true, TSCEn: true, MTCEn: true, MTCFreq: 2, CYCEn: true, PTWEn: true, FUPonPTW: true,
    }));
    for (let i = 0; i < 20000; i++) {
      const ip = BASE + ((i * 0x1234) & 0xfff0);
      t.g.instructions(i % 7);
      t.g.branchJcc(ip, ip + 2, ip + 0x40, (i * 2654435761) % 3 === 0);
      if (i % 5 === 0) { t.g.branchDirect('call', ip, ip + 5, BASE + 0x8000); t.g.ret(BASE + 0x8010, BASE + 0x8011, ip + 5); }
      if (i % 11 === 0) t.g.branchIndirect('jmp', ip, ip + 2, BASE + ((i * 0x777) & 0xffff0));
      if (i % 97 === 0) t.g.interrupt('external', ip, ip + 2, -0x7f000000 + (i & 0xff0), 0, 0x2000, 1);
      if (i % 97 === 0) t.g.farTransfer('iret', -0x7f000000, -0x7effffff, ip + 2, 3, 0x1000, 1);
      if (i % 131 === 0) t.g.ptwrite(ip, BigInt(i), 8);
      if (i % 499 === 0) { t.g.untracedEnter(ip + 2); t.g.untracedExit(ip + 2); }
    }
    t.g.traceDisable(BASE);
    const bytes = t.bytes();
    const lines = (await ptjsonOf(tools!, new Map([['run', bytes]]))).get('run')!;
    const types = lines.map((l) => JSON.parse(l) as { type?: string; error?: string });
    expect(types.filter((x) => x.error !== undefined)).toEqual([]);
    const mine = tokens(bytes).map((s) => s.split(' ')[0]!.replace(/^tnt$/, 'tnt.8'));
    expect(types.map((x) => x.type)).toEqual(mine);
    expect(mine).toContain('ovf');
    expect(mine.filter((s) => s === 'psb').length).toBeGreaterThan(2);
  });
});
