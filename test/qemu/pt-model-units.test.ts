// The parts of `--pt model` that need no VM: which MSRs the model owns and how a mixed batch is
// routed, the synchronous guest-RAM file adapter, transcript relocation, and the model unit over
// a plain memory agreeing with SimTarget.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GeneralProtectionError, PtError } from '../../driver/errors.js';
import type { MsrOp, MsrResult, TranscriptLine } from '../../driver/target.js';
import { QemuTarget } from '../../harness/qemu/qemu-target.js';
import { GuestRamSync } from '../../harness/qemu/pt-model/guest-ram-sync.js';
import { openRamFile, type RamFile } from '../../harness/qemu/ram-file.js';
import { PtModel } from '../../harness/qemu/pt-model/pt-model.js';
import { relocateTranscript } from '../../harness/qemu/pt-model/relocate.js';
import { isModelMsr, routedBatch, splitBatch } from '../../harness/qemu/pt-model/routing.js';
import { SparsePhysMemory } from '../../harness/sim/phys-memory.js';
import { SimTarget } from '../../harness/sim/sim-target.js';
import { generateWorkload } from '../../harness/sim/workload/index.js';

describe('which MSRs the model owns (issue 5 item 6)', () => {
  test.for([
    { msr: 0x560, name: 'IA32_RTIT_OUTPUT_BASE' }, { msr: 0x561, name: 'IA32_RTIT_OUTPUT_MASK_PTRS' },
    { msr: 0x570, name: 'IA32_RTIT_CTL' }, { msr: 0x571, name: 'IA32_RTIT_STATUS' }, { msr: 0x572, name: 'IA32_RTIT_CR3_MATCH' },
    { msr: 0x580, name: 'IA32_RTIT_ADDR0_A' }, { msr: 0x587, name: 'IA32_RTIT_ADDR3_B' },
    { msr: 0x38e, name: 'IA32_PERF_GLOBAL_STATUS' }, { msr: 0x390, name: 'IA32_PERF_GLOBAL_STATUS_RESET' },
    { msr: 0x391, name: 'IA32_PERF_GLOBAL_STATUS_SET' }, { msr: 0xda0, name: 'IA32_XSS' }, { msr: 0x834, name: 'x2APIC LVT PMI' },
  ])('$name goes to the model', ({ msr }) => {
    expect(isModelMsr(msr)).toBe(true);
  });

  test.for([
    { msr: 0x573, name: '0x573 (between STATUS and ADDR0_A, no RTIT MSR)' }, { msr: 0x588, name: '0x588 (after ADDR3_B)' },
    { msr: 0x38f, name: 'IA32_PERF_GLOBAL_CTRL' }, { msr: 0x10, name: 'IA32_TIME_STAMP_COUNTER' },
    { msr: 0xc000_0103, name: 'IA32_TSC_AUX' }, { msr: 0x6e1, name: 'IA32_PKRS' },
  ])('$name stays the guest\'s', ({ msr }) => {
    expect(isModelMsr(msr)).toBe(false);
  });
});

describe('mixed batches', () => {
  const TSC_AUX = 0xc000_0103;
  const ops: MsrOp[] = [
    { op: 'wrmsr', msr: 0x570, value: 0n }, { op: 'rdmsr', msr: 0x571 },
    { op: 'wrmsr', msr: TSC_AUX, value: 1n }, { op: 'rdmsr', msr: TSC_AUX },
    { op: 'rdmsr', msr: 0x570 },
  ];
  const ok = (o: MsrOp): MsrResult => ({ ok: true, op: o.op, msr: o.msr, value: o.op === 'wrmsr' ? o.value : 0x42n });
  const gp = (o: MsrOp): MsrResult => ({ ok: false, op: o.op, msr: o.msr, fault: new GeneralProtectionError({ op: o.op, msr: o.msr, reason: 'test' }).fault });

  test('split into runs of consecutive ops with one owner, in order', () => {
    expect(splitBatch(ops).map((r) => [r.owner, r.ops.length])).toEqual([['model', 2], ['guest', 2], ['model', 1]]);
  });

  test('each guest run is one call, and results come back in op order', async () => {
    const calls: number[] = [];
    const res = await routedBatch(ops, ok, async (g) => { calls.push(g.length); return g.map(ok); });
    expect([calls, res.map((r) => r.msr)]).toEqual([[2], ops.map((o) => o.msr)]);
  });

  test('a model #GP ends the batch: the guest is never called', async () => {
    let called = false;
    const res = await routedBatch(ops, (o) => (o.op === 'rdmsr' ? gp(o) : ok(o)), async (g) => { called = true; return g.map(ok); });
    expect([res.map((r) => r.ok), called]).toEqual([[true, false], false]);
  });

  test('a guest #GP ends the batch: later model ops do not run', async () => {
    const model: MsrOp[] = [];
    const res = await routedBatch(ops, (o) => { model.push(o); return ok(o); }, async (g) => [ok(g[0]!), gp(g[1]!)]);
    expect([res.map((r) => r.ok), model.length]).toEqual([[true, true, true, false], 2]);
  });
});

const MiB = 1 << 20;

describe.each(['mmap', 'pread'] as const)('GuestRamSync over the guest-RAM file (%s)', (access) => {
  const layout = { below4g: BigInt(MiB), above4g: 64n * 1024n };
  let dir: string;
  let file: string;
  let ramFile: RamFile;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ptlab-ramsync-'));
    file = join(dir, 'ram');
    await writeFile(file, new Uint8Array(MiB + 64 * 1024));
    ramFile = await openRamFile(file, MiB + 64 * 1024, { access });
  });
  afterAll(async () => {
    ramFile.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('a write at a physical address below 4 GiB is at that file offset, and reads back', () => {
    const ram = new GuestRamSync(ramFile, layout, () => true);
    ram.writeNow(0x1000n, Uint8Array.of(1, 2, 3));
    expect([...ram.readNow(0xfffn, 5)]).toEqual([0, 1, 2, 3, 0]);
    expect([...readFileSync(file).subarray(0x1000, 0x1003)]).toEqual([1, 2, 3]);
  });

  test('a read into a caller\'s array fills its first bytes and returns a view of them', () => {
    const ram = new GuestRamSync(ramFile, layout, () => true);
    const into = new Uint8Array(8).fill(0xee);
    const got = ram.readNow(0x1000n, 3, into);
    expect(got.buffer).toBe(into.buffer);
    expect([...into]).toEqual([1, 2, 3, 0xee, 0xee, 0xee, 0xee, 0xee]);
    expect(() => ram.readNow(0x1000n, 9, into)).toThrow(expect.objectContaining({ code: 'bad_config' }));
  });

  test('high RAM at 4 GiB continues the file after the low segment (guest-ram.ts q35 layout)', () => {
    const ram = new GuestRamSync(ramFile, layout, () => true);
    ram.writeNow(1n << 32n, Uint8Array.of(9));
    expect(readFileSync(file)[MiB]).toBe(9);
  });

  test('an access the gate refuses throws PtError bad_address and writes nothing', () => {
    const ram = new GuestRamSync(ramFile, layout, (a) => a >= 0x8000n);
    const e = (() => { try { ram.writeNow(0x2000n, Uint8Array.of(7)); return undefined; } catch (x) { return x; } })();
    expect(e).toMatchObject({ code: 'bad_address' });
    expect(readFileSync(file)[0x2000]).toBe(0);
  });

  test('an address that is not guest RAM throws PtError bad_address', () => {
    const ram = new GuestRamSync(ramFile, layout, () => true);
    expect(() => ram.readNow(BigInt(MiB) - 2n, 4)).toThrow(PtError);
  });

  test('after close every access throws PtError bad_address, and the shared file stays open for its owner', () => {
    const ram = new GuestRamSync(ramFile, layout, () => true);
    ram.close();
    ram.close();
    expect(() => ram.readNow(0n, 1)).toThrow(expect.objectContaining({ code: 'bad_address' }));
    expect(ramFile.access).toBe(access);
    const one = new Uint8Array(1);
    ramFile.readInto(0x1000, one);
    expect(one[0]).toBe(1);
  });
});

describe('relocateTranscript', () => {
  const line = (seq: number, l: Omit<TranscriptLine, 'seq' | 't_us' | 'cpu'> & { cpu?: number }): TranscriptLine =>
    ({ seq, t_us: seq * 10, cpu: 0, ...l });
  const sim = [
    line(0, { op: 'alloc', cpu: -1, value: '0x2000/0x2000', result: '0x100000' }),
    line(1, { op: 'wrmsr', msr: '0x560', value: '0x100000' }),
    line(2, { op: 'rdmsr', msr: '0x560', result: '0x101000' }),
    line(3, { op: 'free', cpu: -1, value: '0x100000' }),
  ];
  const guest = [
    line(0, { op: 'alloc', cpu: -1, value: '0x2000/0x2000', result: '0x7a6000' }),
    line(1, { op: 'wrmsr', msr: '0x560', value: '0x7a6000' }),
    line(2, { op: 'rdmsr', msr: '0x560', result: '0x7a7000' }),
    line(3, { op: 'free', cpu: -1, value: '0x7a6000' }),
  ];

  test('moves alloc, free and OUTPUT_BASE addresses into the reference regions and drops t_us', () => {
    expect(relocateTranscript(guest, sim)).toEqual(sim.map(({ t_us: _t, ...l }) => l));
  });

  test('keeps an address outside every region, so a stray address still differs', () => {
    const stray = [...guest.slice(0, 1), line(1, { op: 'wrmsr', msr: '0x560', value: '0x9000000' })];
    expect(relocateTranscript(stray, sim)[1]).toMatchObject({ value: '0x9000000' });
  });

  test('leaves values of other MSRs alone', () => {
    const other = [...guest.slice(0, 1), line(1, { op: 'wrmsr', msr: '0x561', value: '0x7a6000' })];
    expect(relocateTranscript(other, sim)[1]).toMatchObject({ value: '0x7a6000' });
  });
});

describe('PtModel over a plain memory', () => {
  test('a single-range run writes the same bytes and truth as SimTarget of the same profile', async () => {
    const w = generateWorkload(4, { branches: 3_000 });
    const program = (cpu: { msr: (m: number, v: bigint) => void }): void => {
      cpu.msr(0x571, 0n); cpu.msr(0x560, 0x10_0000n); cpu.msr(0x561, 0xffffn | 0x7fn);
      cpu.msr(0x570, (1n << 3n) | (1n << 13n) | 1n); // User, BranchEn, TraceEn (docs/sdm/msrs.md §3.1)
    };
    const drain = async (events: AsyncIterable<unknown>) => { for await (const _ of events) { /* to the exit */ } };

    await using sim = await SimTarget.create({ profile: 'skylake', trace: { truth: true } });
    program({ msr: (m, v) => sim.unit(0).write(m, v) });
    await using exA = sim.start(w, 0);
    await drain(exA.events);
    sim.unit(0).write(0x570, 0n);

    const mem = new SparsePhysMemory();
    const model = new PtModel(mem, 1, { profile: 'skylake', trace: { truth: true } });
    program({ msr: (m, v) => model.wrmsr(0, m, v) });
    await using exB = model.start(w, 0, undefined, 'test');
    await drain(exB.events);
    model.wrmsr(0, 0x570, 0n);

    const n = sim.written(0);
    expect(n).toBeGreaterThan(0);
    expect([model.written(0), Buffer.from(mem.readNow(0x10_0000n, n)).equals(Buffer.from(sim.phys.readNow(0x10_0000n, n)))]).toEqual([n, true]);
    expect(model.truth(0)).toEqual(sim.truth(0));
  });
});

describe('QemuTarget.launch with pt: model refuses bad options before it boots', () => {
  const config = { accel: 'tcg', cpu: 'max', smp: 1, memoryMiB: 256, kernel: '/nonexistent/vmlinux', initrd: '/nonexistent/initrd', qemuBinary: '/nonexistent/qemu' } as const;

  test('an unknown profile is PtError bad_config', async () => {
    await expect(QemuTarget.launch(config, { pt: 'model', profile: 'pentium' as never })).rejects.toMatchObject({ code: 'bad_config' });
  });

  test('pmiClearsTraceEn (a guest-module option) is PtError bad_config', async () => {
    await expect(QemuTarget.launch(config, { pt: 'model', pmiClearsTraceEn: true })).rejects.toMatchObject({ code: 'bad_config' });
  });
});
