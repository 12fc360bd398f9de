// Losses inside the CPU (docs/sdm/packets.md §12 OVF; docs/design.md losses.json `dropped`) and the
// independent check: libipt 2.0.5 decodes every sim trace without errors.
import { describe, expect, test } from 'vitest';
import { libiptTools, ptjsonOf } from '../libipt/tools.js';
import { packetTypes, sim, singleRangeRun, workload } from './rig.js';

/** A buffer that cannot keep up: 256 bytes, draining 1 byte per 20 cycles. */
const SLOW = { capacity: 256, drainBytesPerCycle: 0.05 };

describe('internal buffer overflow', () => {
  test('a tiny drain rate drops bytes inside the CPU and the trace shows OVF', async () => {
    await using t = await sim({ trace: { truth: true, buffer: SLOW } });
    const { bytes } = await singleRangeRun(t, workload(11, { branches: 20_000 }));
    expect(t.dropped(0)).toBeGreaterThan(0);
    expect(packetTypes(bytes)).toContain('ovf');
  });

  test('truth records the overflow', async () => {
    await using t = await sim({ trace: { truth: true, buffer: SLOW } });
    await singleRangeRun(t, workload(11, { branches: 20_000 }));
    expect(t.truth(0).some((l) => l.startsWith('{"kind":"overflow"'))).toBe(true);
  });

  test('an unlimited buffer drops nothing', async () => {
    await using t = await sim();
    const { bytes } = await singleRangeRun(t, workload(11, { branches: 20_000 }));
    expect([t.dropped(0), packetTypes(bytes).includes('ovf')]).toEqual([0, false]);
  });
});

const { tools, title } = libiptTools();

describe.skipIf(!tools)(title('libipt decodes sim traces'), () => {
  test.for([
    { name: 'plain user tracing', seed: 21, ctl: { User: true, BranchEn: true }, trace: {} },
    { name: 'timing and PSBFreq 0', seed: 22, ctl: { User: true, BranchEn: true, TSCEn: true, MTCEn: true, CYCEn: true, PSBFreq: 0 }, trace: {} },
    { name: 'interrupts, CR3, PTWRITE with FUPonPTW', seed: 23, ctl: { User: true, OS: true, BranchEn: true, PTWEn: true, FUPonPTW: true }, trace: {} },
    { name: 'DisRETC and overflow', seed: 24, ctl: { User: true, BranchEn: true, DisRETC: true }, trace: { buffer: SLOW } },
  ] as const)('$name: no decode errors', async ({ seed, ctl, trace }) => {
    await using t = await sim({ profile: 'full', trace: { truth: false, ...trace } });
    const w = workload(seed, { branches: 8000, interrupts: 3, cr3Switches: 2, ptwrites: 3 });
    const { bytes } = await singleRangeRun(t, w, { ctl, sliceBranches: 1500 });
    const lines = (await ptjsonOf(tools!, new Map([['run', bytes]]))).get('run')!;
    const parsed = lines.map((l) => JSON.parse(l) as { type?: string; error?: string });
    expect(parsed.filter((x) => x.error !== undefined)).toEqual([]);
    expect(parsed.map((x) => x.type)).toEqual(packetTypes(bytes));
  });
});
