// ToPA runs end to end (docs/sdm/output.md §4.3–§4.5): PMIs with skid while the engine is stopped,
// STOP, and slices (docs/design.md "How the model runs").
import { describe, expect, test } from 'vitest';
import type { TargetEvent } from '../../driver/target.js';
import type { SimPmiEvent } from '../../harness/sim/exec/execution.js';
import { CTL, disable, GLOBAL_STATUS_RESET, MASK_PTRS, packetTypes, programTopa, runToExit, sim, singleRangeRun, workload } from './rig.js';

const TOPA_PMI = 1n << 55n;   // IA32_PERF_GLOBAL_STATUS[55] Trace_ToPA_PMI (docs/sdm/msrs.md §11)
const SKID = 100;

/** The handler of docs/sdm/output.md §7.1 without moving the table: TraceEn off, ack bit 55, TraceEn on, unmask. */
async function ackOnly(t: Awaited<ReturnType<typeof sim>>, seen: bigint[]): Promise<void> {
  const ctl = await t.rdmsr(0, CTL);
  await t.wrmsr(0, CTL, ctl & ~1n);
  seen.push(await t.rdmsr(0, MASK_PTRS));
  await t.wrmsr(0, GLOBAL_STATUS_RESET, TOPA_PMI);
  await t.wrmsr(0, CTL, ctl);
  await t.pmiEnable(0);
}

describe('ToPA PMI', () => {
  test('arrives with GLOBAL_STATUS[55] set, TraceEn still 1, and nothing acked by the top half', async () => {
    await using t = await sim({ topa: { pmiSkid: SKID }, trace: { truth: true, flushBytes: 256 } });
    await programTopa(t, 4, { ints: [1] });
    const ptrs: bigint[] = [];
    const events = await runToExit(t, workload(11, { branches: 40_000 }), (e) => (e.kind === 'pmi' ? ackOnly(t, ptrs) : undefined));
    const pmi = events.find((e) => e.kind === 'pmi');
    expect(pmi).toMatchObject({ kind: 'pmi', cpu: 0, acked: false, traceEnCleared: false });
    const p = pmi as Extract<TargetEvent, { kind: 'pmi' }>;
    expect([p.globalStatus & TOPA_PMI, p.ctl & 1n]).toEqual([TOPA_PMI, 1n]);
  });

  test('is taken after the skid: the handler finds the pointers SKID + bytesSincePmi into the next region', async () => {
    await using t = await sim({ topa: { pmiSkid: SKID }, trace: { truth: true, flushBytes: 256 } });
    await programTopa(t, 4, { ints: [1] });
    const ptrs: bigint[] = [];
    const events = await runToExit(t, workload(11, { branches: 40_000 }), (e) => (e.kind === 'pmi' ? ackOnly(t, ptrs) : undefined));
    const pmis = events.filter((e): e is SimPmiEvent => e.kind === 'pmi');
    expect(pmis.length).toBeGreaterThanOrEqual(2);
    // MASK_PTRS: OutputOffset in 63:32, the table offset / 8 in 31:7 (docs/sdm/msrs.md §6): entry 2 follows the INT entry 1.
    expect(ptrs.map((v) => [Number((v >> 7n) & 0x1ff_ffffn), Number(v >> 32n)]))
      .toEqual(pmis.map((e) => [2, SKID + e.model.bytesSincePmi]));
  });

  test('the engine is stopped while the handler runs: no byte is written between the event and the next pull', async () => {
    await using t = await sim({ topa: { pmiSkid: SKID } });
    await programTopa(t, 4, { ints: [1, 3] });
    const deltas: number[] = [];
    await runToExit(t, workload(11, { branches: 40_000 }), async (e) => {
      if (e.kind !== 'pmi') return;
      const w0 = t.written(0);
      await new Promise((r) => setTimeout(r, 2));
      deltas.push(t.written(0) - w0);
      await ackOnly(t, []);
      deltas.push(t.written(0) - w0);
    });
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.every((d) => d === 0)).toBe(true);
  });

  test('a masked LVT entry delivers no PMI event (the CPU masks it at each delivery until pmiEnable)', async () => {
    await using t = await sim({ topa: { pmiSkid: SKID } });
    await programTopa(t, 4, { ints: [1, 3] });
    await t.wrmsr(0, 0x834, 0x1_00fen);   // LVT mask bit 16 (docs/sdm/msrs.md §11.1)
    const events = await runToExit(t, workload(11, { branches: 40_000 }));
    expect(events.map((e) => e.kind)).toEqual(['exit']);
  });
});

describe('ToPA STOP', () => {
  test('stops output at the end of the STOP region: Stopped=1 and written() = the regions before it', async () => {
    await using t = await sim();
    await programTopa(t, 3, { stops: [1] });
    await runToExit(t, workload(11, { branches: 40_000 }));
    const { status } = await disable(t);
    expect([status & (1n << 5n), t.written(0)]).toEqual([1n << 5n, 8192]);
  });

  test('the bytes before the stop decode without errors', async () => {
    await using t = await sim();
    const rig = await programTopa(t, 3, { stops: [1] });
    await runToExit(t, workload(11, { branches: 40_000 }));
    await disable(t);
    const a = await t.phys.read(rig.regions[0]!.base, 4096), b = await t.phys.read(rig.regions[1]!.base, 4096);
    const bytes = new Uint8Array(8192);
    bytes.set(a); bytes.set(b, 4096);
    // The last packet may be cut by the stop (eos is the only acceptable error, at the very end).
    const types = packetTypes(bytes);
    expect(types.slice(0, -1).filter((s) => s.startsWith('error'))).toEqual([]);
  });
});

describe('slices', () => {
  test('a slice event comes every sliceBranches branches, counting branches', async () => {
    await using t = await sim();
    const w = workload(1);
    const { events } = await singleRangeRun(t, w, { sliceBranches: 500 });
    const n = w.model.branchCount;
    const want = Array.from({ length: Math.floor((n - 1) / 500) }, (_, i) => ({ kind: 'slice', cpu: 0, branches: 500 * (i + 1) }));
    expect(events).toEqual([...want, { kind: 'exit', cpu: 0, code: 0 }]);
  });

  test('each slice is a handler visit in the trace: one more TIP.PGE and TIP.PGD per slice', async () => {
    await using t = await sim();
    const w = workload(1);
    const { bytes, events } = await singleRangeRun(t, w, { sliceBranches: 500 });
    const slices = events.filter((e) => e.kind === 'slice').length;
    const types = packetTypes(bytes);
    expect([types.filter((s) => s === 'tip.pge').length, types.filter((s) => s === 'tip.pgd').length]).toEqual([1 + slices, 1 + slices]);
  });
});
