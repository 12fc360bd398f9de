// The model's memory oracle (harness/sim/memory-oracle.ts, docs/design.md "The memory oracle"): every
// way PT reaches memory the driver does not own is a `corrupt` event — a trace write, a ToPA table
// read (the full profile's read-ahead included), the pointer loaded at TraceEn 0→1 by WRMSR or by
// XRSTORS, and a free of memory PT may still write while TraceEn=1 — while a driver that keeps to
// its own memory makes none.
import { describe, expect, test } from 'vitest';
import { buildPtXsaveArea } from '../../driver/hw/xsave.js';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { topaEntry } from '../../driver/hw/topa.js';
import type { SimTarget } from '../../harness/sim/sim-target.js';
import { CTL, disable, MASK_PTRS, OUTPUT_BASE, programSingleRange, programTopa, runToExit, sim, STATUS, USER, workload, writeU64 } from '../simexec/rig.js';

const kinds = (t: SimTarget): string[] => t.oracle.events.map((e) => e.kind);
const ERROR = 1n << 4n;

describe('a driver that keeps to its own memory', () => {
  test.for(['skylake', 'full', 'broadwell'] as const)('makes no corrupt event on %s (ToPA ring, run to exit, disable, free)', async (profile) => {
    await using t = await sim({ profile });
    const n = profile === 'broadwell' ? 1 : 4;
    const rig = await programTopa(t, n, { ints: profile === 'broadwell' ? [] : [1] });
    await runToExit(t, workload(3, { branches: 20_000 }));
    await disable(t);
    for (const r of [...rig.regions, rig.table]) await t.phys.free(r);
    expect(t.oracle.events).toEqual([]);
  });
});

describe('trace writes', () => {
  test('a region freed before the enable is written into: trace-write, and the output stops with Error', async () => {
    await using t = await sim();
    const rig = await programTopa(t, 2);
    await disable(t);
    await t.phys.free(rig.regions[1]!);
    await t.wrmsr(0, STATUS, 0n);
    await t.wrmsr(0, MASK_PTRS, 0x7fn);
    await t.wrmsr(0, CTL, IA32_RTIT_CTL.encode({ ...USER, ToPA: true, TraceEn: true }));
    await runToExit(t, workload(5, { branches: 40_000 }));
    const { status } = await disable(t);
    expect(kinds(t)).toEqual(['trace-write']);
    expect(t.oracle.events[0]).toMatchObject({ cpu: 0, addr: rig.regions[1]!.base });
    expect(status & ERROR).toBe(ERROR);
  });

  test('a single-range output over memory the driver never allocated: output-base at the enable, nothing written there', async () => {
    await using t = await sim();
    const mine = await t.phys.alloc(4096, 4096);
    await programSingleRange(t, { base: mine.base + 0x10_0000n, size: 4096 });
    await runToExit(t, workload(2));
    await disable(t);
    expect(kinds(t)).toEqual(['output-base']);
    expect(t.written(0)).toBe(0);
  });
});

describe('ToPA table reads', () => {
  test('an END into a freed table: topa-read when the CPU reaches it', async () => {
    await using t = await sim();
    const [a, b, ra, rb] = [await t.phys.alloc(4096, 4096), await t.phys.alloc(4096, 4096), await t.phys.alloc(4096, 4096), await t.phys.alloc(4096, 4096)];
    await writeU64(t, a.base, [topaEntry({ base: ra.base, size: 4096 }), topaEntry({ base: b.base, end: true })]);
    await writeU64(t, b.base, [topaEntry({ base: rb.base, size: 4096 }), topaEntry({ base: a.base, end: true })]);
    await t.phys.free(b);
    await t.msrBatch(0, [
      { op: 'wrmsr', msr: OUTPUT_BASE, value: a.base }, { op: 'wrmsr', msr: MASK_PTRS, value: 0x7fn },
      { op: 'wrmsr', msr: CTL, value: IA32_RTIT_CTL.encode({ ...USER, ToPA: true, TraceEn: true }) },
    ]);
    expect(kinds(t)).toEqual([]);
    await runToExit(t, workload(5, { branches: 40_000 }));
    expect(kinds(t)).toEqual(['topa-read']);
    expect(t.oracle.events[0]!.addr).toBe(b.base);
  });

  test('the full profile reads the freed table ahead into its entry cache at the enable (§4.8)', async () => {
    await using t = await sim({ profile: 'full' });
    const [a, b, ra] = [await t.phys.alloc(4096, 4096), await t.phys.alloc(4096, 4096), await t.phys.alloc(4096, 4096)];
    await writeU64(t, a.base, [topaEntry({ base: ra.base, size: 4096 }), topaEntry({ base: b.base, end: true })]);
    await t.phys.free(b);
    await t.msrBatch(0, [
      { op: 'wrmsr', msr: OUTPUT_BASE, value: a.base }, { op: 'wrmsr', msr: MASK_PTRS, value: 0x7fn },
      { op: 'wrmsr', msr: CTL, value: IA32_RTIT_CTL.encode({ ...USER, ToPA: true, TraceEn: true }) },
    ]);
    expect(kinds(t)).toEqual(['topa-read']);
  });
});

describe('the output pointer loaded at TraceEn 0→1', () => {
  test('by WRMSR of CTL, with OUTPUT_BASE at a freed table: output-base, Error set, nothing written', async () => {
    await using t = await sim();
    const rig = await programTopa(t, 2);
    await disable(t);
    await t.phys.free(rig.table);
    await t.wrmsr(0, STATUS, 0n);
    await t.wrmsr(0, CTL, IA32_RTIT_CTL.encode({ ...USER, ToPA: true, TraceEn: true }));
    expect(kinds(t)).toEqual(['output-base']);
    expect(t.oracle.events[0]!.addr).toBe(rig.table.base);
    expect((await t.rdmsr(0, STATUS)) & ERROR).toBe(ERROR);
  });

  test('by XRSTORS of an image with TraceEn=1 and OUTPUT_BASE never allocated: output-base', async () => {
    await using t = await sim({ profile: 'full' });
    const area = buildPtXsaveArea({ state: { IA32_RTIT_CTL: IA32_RTIT_CTL.encode({ ...USER, ToPA: true, TraceEn: true }), IA32_RTIT_OUTPUT_BASE: 0x20_0000n, IA32_RTIT_OUTPUT_MASK_PTRS: 0x7fn } });
    await t.xrstors(0, area, 1n << 8n);
    expect(kinds(t)).toEqual(['output-base']);
    expect(t.oracle.events[0]!.addr).toBe(0x20_0000n);
  });
});

describe('frees while TraceEn=1', () => {
  test('freeing a region the CPU may still write is free-while-tracing (the free goes ahead, as on silicon)', async () => {
    await using t = await sim();
    const rig = await programTopa(t, 3);
    await t.phys.free(rig.regions[2]!);
    expect(kinds(t)).toEqual(['free-while-tracing']);
    expect(t.oracle.events[0]).toMatchObject({ cpu: 0, addr: rig.regions[2]!.base, length: 4096 });
    expect(t.phys.owns(rig.regions[2]!.base, 1)).toBe(false);
  });

  test('freeing the table itself, or a single-range output, is free-while-tracing too', async () => {
    await using t = await sim({ cpus: 2 });
    const rig = await programTopa(t, 1);
    const range = await t.phys.alloc(8192, 8192);
    await programSingleRange(t, range, USER, 1);
    await t.phys.free(rig.table);
    await t.phys.free(range);
    expect(t.oracle.events.map((e) => [e.kind, e.cpu])).toEqual([['free-while-tracing', 0], ['free-while-tracing', 1]]);
  });

  test('freeing memory PT cannot reach, or anything once TraceEn=0, is no event', async () => {
    await using t = await sim();
    const other = await t.phys.alloc(4096, 4096);
    const rig = await programTopa(t, 2);
    await t.phys.free(other);
    await disable(t);
    for (const r of [...rig.regions, rig.table]) await t.phys.free(r);
    expect(t.oracle.events).toEqual([]);
  });
});

describe('the driver-facing memory is as strict as a real target\'s', () => {
  test('reads and writes outside every allocated region are refused with bad_address', async () => {
    await using t = await sim();
    const r = await t.phys.alloc(4096, 4096);
    await expect(t.phys.write(r.base + 4096n, new Uint8Array(8))).rejects.toMatchObject({ code: 'bad_address' });
    await expect(t.phys.read(r.base + 4090n, 8)).rejects.toMatchObject({ code: 'bad_address' });
    await t.phys.free(r);
    await expect(t.phys.read(r.base, 8)).rejects.toMatchObject({ code: 'bad_address' });
  });
});
