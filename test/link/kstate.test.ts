// The module's state as the helper's `kstate` verb sends it, and the interface version the host
// speaks: one number in two languages (guest/kmod/ptlab_uapi.h and harness/link/kstate.ts).
import { readFile } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { parseCpuList, parseKstate, PTLAB_ABI } from '../../harness/link/kstate.js';

describe('the module\'s state', () => {
  test('the host\'s PTLAB_ABI is the module\'s', async () => {
    const header = await readFile('guest/kmod/ptlab_uapi.h', 'utf8');
    expect(Number(/^#define PTLAB_ABI\s+(\d+)$/m.exec(header)?.[1])).toBe(PTLAB_ABI);
  });

  test.for([
    ['-', []], ['0', [0]], ['0,2-3', [0, 2, 3]], ['1-2,5,7-8', [1, 2, 5, 7, 8]],
  ] as const)('the CPU list %s is %j', ([text, cpus]) => {
    expect(parseCpuList(text)).toEqual(cpus);
  });

  test('a kstate reply parses into every field', () => {
    const line = 'abi=0x2 files=0x2 buffers=0x3 bytes=0x4000 orphans=0x1 orphan_bytes=0x1000 mine_buffers=0x2 mine_bytes=0x3000 lockdown=0x0 nr_cpus=0x4 armed=1 armed_mine=- owned=0-1 owned_mine=0 taken=3';
    expect(parseKstate(line.split(' '))).toEqual({
      abi: 2, files: 2, buffers: 3, bytes: 0x4000, orphans: 1, orphanBytes: 0x1000, mineBuffers: 2, mineBytes: 0x3000,
      lockdown: false, nrCpus: 4, armed: [1], armedMine: [], owned: [0, 1], ownedMine: [0], taken: [3],
    });
  });

  test('a reply without a field is refused, naming it', () => {
    expect(() => parseKstate(['abi=0x2'])).toThrow(/lacks files/);
  });
});
