// Several contexts on one CPU (driver/contexts.ts) on the real model: each context's output is
// whole and only its own, with XSAVES or with RDMSR/WRMSR switching, and a ToPA PMI delivered after
// a context was switched out is handled on that context's saved image.
import { describe, expect, test } from 'vitest';
import { traceContexts } from '../../driver/contexts.js';
import type { TraceRequest } from '../../driver/request.js';
import { SimTarget } from '../../harness/sim/sim-target.js';
import { generateWorkload } from '../../harness/sim/workload/index.js';

const req = (switching: 'xsaves' | 'manual'): TraceRequest => ({
  output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 }, switching, TSCEn: true, MTCFreq: 0,
});

async function twoContexts(profile: 'full' | 'skylake', switching: 'xsaves' | 'manual') {
  await using sim = await SimTarget.create({ profile, topa: { pmiSkid: 256 }, trace: { flushBytes: 256 } });
  const a = generateWorkload(11, { branches: 20_000 }), b = generateWorkload(12, { base: 0x2000_0000n, branches: 20_000 });
  const rs = await traceContexts(sim, [{ name: 'A', workload: a, req: req(switching) }, { name: 'B', workload: b, req: req(switching) }], {
    sliceBranches: 48, writtenNow: () => sim.written(0),
  });
  return { rs, total: sim.written(0) };
}

describe('traceContexts', () => {
  test.for(['xsaves', 'manual'] as const)('with %s switching each context is lossless and the CPU\'s bytes are all accounted to one of them', async (mode) => {
    const { rs, total } = await twoContexts('full', mode);
    expect([rs.map((r) => r.ledger.lost.length), rs.map((r) => r.ledger.written === r.ledger.collected), rs[0]!.ledger.written! + rs[1]!.ledger.written!])
      .toEqual([[0, 0], [true, true], total]);
  });
  test('single-entry contexts (MENTRY=0) are lossless: a swapped-out region is serviced, so a switched-out context is due only for bytes written since', async () => {
    // Each refill swaps in a fresh region before the old one is full (early PMI): the old placement,
    // INT and behind the cursor, must count as serviced or that context swallows the other's PMIs.
    await using sim = await SimTarget.create({ profile: 'broadwell', trace: { truth: false } });
    const a = generateWorkload(1, { branches: 40_000 }), b = generateWorkload(10, { base: 0x2000_0000n, branches: 40_000 });
    const se: TraceRequest = { output: { scheme: 'topa', policy: 'single-entry', regionSize: 8192, regions: 1 }, switching: 'manual' };
    const rs = await traceContexts(sim, [{ name: 'A', workload: a, req: se }, { name: 'B', workload: b, req: se }], {
      sliceBranches: 300, writtenNow: () => sim.written(0),
    });
    expect(rs.map((r) => [r.name, r.ledger.lost, r.ledger.written === r.ledger.collected, r.pmis.filter((p) => p.action === 'handled').length > 0]))
      .toEqual([['A', [], true, true], ['B', [], true, true]]);
  });
  test('single-entry contexts (MENTRY=0): an early PMI that lands after its context was switched out services that context on its saved image', async () => {
    // The PMI comes before the region is full, by a margin the driver cannot know (docs/sdm/output.md
    // §4.6), and a skid this long often carries it past the switch: any byte written since the last
    // service makes a context due, or it would run on to its full STOP+INT entry and stop.
    await using sim = await SimTarget.create({ profile: 'broadwell', topa: { pmiSkid: 400 }, trace: { truth: false } });
    const a = generateWorkload(2, { branches: 60_000 }), b = generateWorkload(20, { base: 0x2000_0000n, branches: 60_000 });
    const se: TraceRequest = { output: { scheme: 'topa', policy: 'single-entry', regionSize: 4096, regions: 1 }, switching: 'manual' };
    const rs = await traceContexts(sim, [{ name: 'A', workload: a, req: se }, { name: 'B', workload: b, req: se }], {
      sliceBranches: 200, writtenNow: () => sim.written(0),
    });
    expect(rs.map((r) => [r.name, r.ledger.lost, r.ledger.written === r.ledger.collected, r.pmis.some((p) => p.action === 'handled-saved')]))
      .toEqual([['A', [], true, true], ['B', [], true, true]]);
  });
  test('a PMI after XSAVES is handled on the switched-out context\'s image', async () => {
    const { rs } = await twoContexts('full', 'xsaves');
    expect(rs.flatMap((r) => r.pmis).some((p) => p.action === 'handled-saved')).toBe(true);
  });
  test('a context that does not switch is refused before anything runs', async () => {
    await using sim = await SimTarget.create({ profile: 'skylake' });
    const w = generateWorkload(1);
    const err = await traceContexts(sim, [{ name: 'A', workload: w, req: { output: req('manual').output } }], { sliceBranches: 10 }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('bad_config');
  });
  test('a second workload on a busy CPU is refused unless it is started as a thread', async () => {
    await using sim = await SimTarget.create({ profile: 'skylake' });
    const w = generateWorkload(1);
    sim.start(w, 0);
    expect(() => sim.start(w, 0)).toThrow(/already running/);
    expect(() => sim.start(w, 0, { thread: true })).not.toThrow();
  });
});
