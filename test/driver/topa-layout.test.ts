// First layouts of each ToPA policy, read back from physical memory and compared with entries
// written by hand from docs/sdm/output.md §4.2 (END=bit 0, INT=bit 2, STOP=bit 4, Size 9:6), §4.5
// (skid guard: no INT on the last entry before END/STOP) and §4.6 (single-entry).
import { describe, expect, test } from 'vitest';
import { AllocationError } from '../../driver/base/errors.js';
import type { TopaPolicy } from '../../driver/request.js';
import { TraceSession } from '../../driver/session.js';
import { TopaManager } from '../../driver/topa/manager.js';
import { END, entries, INT, rig, STOP } from './rig.js';

async function layout(policy: TopaPolicy, regions: number, profile: 'skylake' | 'broadwell' = 'skylake') {
  const r = await rig(profile);
  const s = await TraceSession.open(r.target, { output: { scheme: 'topa', policy, regionSize: 4096, regions } });
  const m = s.plan as TopaManager;
  const t = m.tables[0]!;
  const regs = t.slots.map((x) => (x.kind === 'output' ? x.region.base : 0n));
  return { r, m, t, regs, got: await entries(r, t.base, t.slots.length) };
}

describe('first layout per policy', () => {
  test('grow: INT on the second-to-last region, STOP on the guard region, END to the table', async () => {
    const { t, regs, got } = await layout('grow', 3);
    expect(got).toEqual([regs[0], regs[1]! | INT, regs[2]! | STOP, t.base | END]);
  });
  test('chain: the same first table as grow', async () => {
    const { t, regs, got } = await layout('chain', 3);
    expect(got).toEqual([regs[0], regs[1]! | INT, regs[2]! | STOP, t.base | END]);
  });
  test('circular-fresh: INT on every region but the last before END, no STOP', async () => {
    const { t, regs, got } = await layout('circular-fresh', 3);
    expect(got).toEqual([regs[0]! | INT, regs[1]! | INT, regs[2], t.base | END]);
  });
  test('protect-unread: STOP+INT on the entry before unread data (the last), INT at half way', async () => {
    const { t, regs, got } = await layout('protect-unread', 4);
    expect(got).toEqual([regs[0], regs[1]! | INT, regs[2], regs[3]! | STOP | INT, t.base | END]);
  });
  test('single-entry on Broadwell: entry 0 INT+STOP, entry 1 END to the table itself', async () => {
    const { t, regs, got } = await layout('single-entry', 1, 'broadwell');
    expect(got).toEqual([regs[0]! | INT | STOP, t.base | END]);
  });
  test('every region is aligned to its size and the table to 4 KiB', async () => {
    const { m } = await layout('grow', 4);
    expect([...m.placements.map((p) => p.region.base % 4096n), m.tables[0]!.base % 4096n].every((x) => x === 0n)).toBe(true);
  });
  test('8 KiB regions carry Size=1 and are 8 KiB aligned', async () => {
    const r = await rig('skylake');
    const s = await TraceSession.open(r.target, { output: { scheme: 'topa', policy: 'grow', regionSize: 8192, regions: 2 } });
    const m = s.plan as TopaManager;
    const [e0] = await entries(r, m.tables[0]!.base, 1);
    expect([(e0! >> 6n) & 0xfn, m.placements[0]!.region.base % 8192n]).toEqual([1n, 0n]);
  });
  test('placements list the regions in write order', async () => {
    const { m, regs } = await layout('grow', 3);
    expect(m.placements.map((p) => p.region.base)).toEqual(regs.slice(0, 3));
  });
});

describe('allocation', () => {
  test('a region larger than the target can give surfaces as AllocationError', async () => {
    const r = await rig('skylake', { maxContiguous: 64 * 1024 });
    const err = await TraceSession.open(r.target, { output: { scheme: 'topa', policy: 'grow', regionSize: 128 * 1024, regions: 2 } }).catch((e: unknown) => e);
    expect([err instanceof AllocationError, (err as AllocationError).code]).toEqual([true, 'alloc_failed']);
  });
});
