// The engine's fast path (PacketGenerator.replayPath over the packed path) against the event
// methods it stands for: the same workload run with `trace.replay` on and off must write the same
// bytes, raise the same events at the same instruction boundaries and leave the same STATUS,
// pointers and clock (docs/design.md "How the model runs": deterministic). Truth recording is off in
// both runs, since the fast path only runs without it.
import { describe, expect, test, vi } from 'vitest';
import type { PhysRegion } from '../../driver/target.js';
import type { SimTargetOptions } from '../../harness/sim/sim-target.js';
import type { WorkloadOptions } from '../../harness/sim/workload/index.js';
import { CTL, type CtlFields, disable, GLOBAL_STATUS_RESET, MASK_PTRS, programSingleRange, programTopa, runToExit, sim, STATUS, USER, workload } from './rig.js';

const TOPA_PMI = 1n << 55n;   // IA32_PERF_GLOBAL_STATUS[55] (docs/sdm/msrs.md §11)

interface Case {
  readonly name: string;
  readonly target?: Partial<SimTargetOptions>;
  readonly ctl?: CtlFields;
  readonly workload?: WorkloadOptions;
  /** ToPA with this many 4 KiB regions (INT on `ints`, STOP on `stops`); else one single range. */
  readonly topa?: { readonly n: number; readonly ints?: number[]; readonly stops?: number[] };
  /** Single-range size (a small one wraps). Default 1 MiB. */
  readonly ring?: number;
  readonly sliceBranches?: number;
}

const SLOW = { capacity: 256, drainBytesPerCycle: 0.05 };
const CASES: readonly Case[] = [
  { name: 'RET compression with interrupts, CR3 switches and mode changes', workload: { interrupts: 3, cr3Switches: 2, modeChanges: 1 } },
  { name: 'DisRETC, PSBFreq 0 and slices', ctl: { ...USER, DisRETC: true, PSBFreq: 0 }, sliceBranches: 500 },
  { name: 'DisTNT', target: { profile: 'full' }, ctl: { ...USER, DisTNT: true } },
  { name: 'OS=1 with PTWRITE annotations', target: { profile: 'full' }, ctl: { ...USER, OS: true, PTWEn: true }, workload: { ptwrites: 4, interrupts: 2 } },
  { name: 'a single range that wraps', ring: 1 << 14, ctl: { ...USER, PSBFreq: 0 } },
  { name: 'ToPA PMIs after a skid, 256-byte flushes', target: { topa: { pmiSkid: 100 }, trace: { flushBytes: 256 } }, topa: { n: 4, ints: [1, 3] } },
  { name: 'ToPA PMIs without skid, 1-byte flushes', target: { topa: { pmiSkid: 0 }, trace: { flushBytes: 1 } }, topa: { n: 3, ints: [0, 1, 2] } },
  { name: 'ToPA STOP', topa: { n: 3, stops: [2] } },
  { name: 'internal buffer overflow (slow drain)', target: { trace: { buffer: SLOW } }, workload: { interrupts: 2 } },
  { name: 'overflow with ToPA PMIs', target: { topa: { pmiSkid: 30 }, trace: { buffer: { capacity: 512, drainBytesPerCycle: 0.1 } } }, topa: { n: 4, ints: [0, 2] } },
  { name: 'TSC and MTC timing packets with slices', target: { profile: 'full' }, ctl: { ...USER, TSCEn: true, MTCEn: true, MTCFreq: 0 }, sliceBranches: 900 },
];
const SEEDS = [1, 2, 3];

const hex = (_k: string, v: unknown): unknown => (typeof v === 'bigint' ? `0x${v.toString(16)}` : v);

/** One run: every event (with STATUS/pointers the handler reads), memory, counters, clock. */
async function runCase(c: Case, seed: number, replay: boolean): Promise<string> {
  await using t = await sim({ ...c.target, trace: { ...c.target?.trace, truth: false, replay } });
  const w = workload(seed, { branches: 30_000, ...c.workload });
  let regions: PhysRegion[];
  if (c.topa) {
    regions = (await programTopa(t, c.topa.n, { ...c.topa, ctl: c.ctl ?? USER })).regions;
  } else {
    const size = c.ring ?? 1 << 20;
    regions = [await t.phys.alloc(size, size)];
    await programSingleRange(t, regions[0]!, c.ctl ?? USER);
  }
  const log: unknown[] = [];
  await runToExit(t, w, async (e) => {
    log.push(e, t.written(0), t.dropped(0), t.trace(0).gen.now);
    if (e.kind !== 'pmi') return;
    // The handler of docs/sdm/output.md §7.1 without moving the table: TraceEn off, ack, TraceEn on.
    const ctl = await t.rdmsr(0, CTL);
    await t.wrmsr(0, CTL, ctl & ~1n);
    log.push(await t.rdmsr(0, STATUS), await t.rdmsr(0, MASK_PTRS));
    await t.wrmsr(0, GLOBAL_STATUS_RESET, TOPA_PMI);
    await t.wrmsr(0, CTL, ctl);
    await t.pmiEnable(0);
  }, c.sliceBranches !== undefined ? { sliceBranches: c.sliceBranches } : {});
  log.push(await disable(t), t.written(0), t.dropped(0), t.trace(0).gen.now);
  for (const r of regions) log.push(Buffer.from(await t.phys.read(r.base, r.size)).toString('base64'));
  return JSON.stringify(log, hex);
}

describe('the fast path writes what the event methods write', () => {
  test.for(CASES.flatMap((c) => SEEDS.map((seed) => ({ c, seed, label: `${c.name}, seed ${seed}` }))))('$label', async ({ c, seed }) => {
    expect(await runCase(c, seed, true)).toEqual(await runCase(c, seed, false));
  });
});

describe('the engine takes the fast path', () => {
  test('without truth recording, most branches never reach the per-branch event methods', async () => {
    await using t = await sim({ trace: { truth: false } });
    const w = workload(1, { branches: 30_000 });
    const spy = vi.spyOn(t.trace(0).gen, 'retirePacked');
    await programSingleRange(t, await t.phys.alloc(1 << 20, 1 << 20));
    await runToExit(t, w);
    expect(spy.mock.calls.length).toBeLessThan(w.model.branchCount / 100);
  });

  test('with replay off, every near branch goes through the event methods', async () => {
    await using t = await sim({ trace: { truth: false, replay: false } });
    const w = workload(1, { branches: 30_000 });
    const spy = vi.spyOn(t.trace(0).gen, 'retirePacked');
    await programSingleRange(t, await t.phys.alloc(1 << 20, 1 << 20));
    await runToExit(t, w);
    expect(spy.mock.calls.length).toBe(w.model.branchCount - 1);   // all but the exit SYSCALL
  });
});
