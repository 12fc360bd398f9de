// The sim end to end on single-range output (docs/sdm/output.md §3): determinism, decodability,
// the handler bracket (docs/design.md "How the model runs") and the written() count.
import { describe, expect, test } from 'vitest';
import { disable, packetTypes, programSingleRange, runToExit, sim, singleRangeRun, workload } from './rig.js';

describe('a single-range run of a generated workload', () => {
  test('ends with exactly one exit event with code 0', async () => {
    await using t = await sim();
    const { events } = await singleRangeRun(t, workload(1));
    expect(events).toEqual([{ kind: 'exit', cpu: 0, code: 0 }]);
  });

  test('the same seed gives the same bytes and the same truth', async () => {
    const runs = [];
    for (let i = 0; i < 2; i++) {
      await using t = await sim();
      const { bytes } = await singleRangeRun(t, workload(7, { interrupts: 3, cr3Switches: 2, ptwrites: 2 }));
      runs.push({ bytes, truth: t.truth(0).join('\n') });
    }
    expect(runs[0]!.bytes.length).toBeGreaterThan(100);
    expect(runs[1]).toEqual(runs[0]);
  });

  test('decodes with our packet decoder without errors (timing, PTWRITE, interrupts, PSBFreq 0)', async () => {
    await using t = await sim({ profile: 'full' });
    const { bytes } = await singleRangeRun(t, workload(3, { interrupts: 2, ptwrites: 2 }), {
      ctl: { User: true, BranchEn: true, TSCEn: true, MTCEn: true, CYCEn: true, PTWEn: true, FUPonPTW: true, PSBFreq: 0 },
    });
    const types = packetTypes(bytes);
    expect(types.filter((s) => s.startsWith('error'))).toEqual([]);
    expect(types.filter((s) => s === 'psb').length).toBeGreaterThan(1);
  });

  test('starts with PSB+, then the handler return MODE.Exec + TIP.PGE, and ends with the exit TIP.PGD', async () => {
    await using t = await sim();
    const { bytes } = await singleRangeRun(t, workload(2));
    const types = packetTypes(bytes);
    const firstPge = types.indexOf('tip.pge');
    expect(types.slice(0, 3)).toEqual(['psb', 'cbr', 'psbend']);
    expect(types.slice(firstPge - 1, firstPge + 1)).toEqual(['mode.exec', 'tip.pge']);
    expect(types[types.length - 1]).toBe('tip.pgd');
  });

  test('truth begins with enable at the entry and ends with the exit SYSCALL and a disable', async () => {
    await using t = await sim();
    const w = workload(4);
    await singleRangeRun(t, w);
    const lines = t.truth(0);
    expect(lines[0]).toBe(`{"kind":"enable","ip":"0x${w.entry.toString(16)}"}`);
    expect(lines.slice(-2).map((l) => JSON.parse(l) as { kind: string })).toMatchObject([{ kind: 'far.call' }, { kind: 'disable' }]);
    expect(lines.length).toBe(w.model.branchCount + 2);
  });

  test('written() equals the bytes found in memory on a lossless run', async () => {
    await using t = await sim();
    const { bytes } = await singleRangeRun(t, workload(5));
    expect(t.written(0)).toBe(bytes.length);
    expect(t.dropped(0)).toBe(0);
  });

  test('the model does not advance while the consumer holds an event', async () => {
    await using t = await sim();
    const size = 1 << 20;
    const region = await t.phys.alloc(size, size);
    await programSingleRange(t, region);
    const seen: number[] = [];
    await runToExit(t, workload(6, { branches: 20_000 }), async () => {
      const w0 = t.written(0);
      await new Promise((r) => setTimeout(r, 5));
      seen.push(t.written(0) - w0);
    }, { sliceBranches: 1000 });
    expect(seen.length).toBeGreaterThan(3);
    expect(seen.every((d) => d === 0)).toBe(true);
    await disable(t);
  });
});
