// RoutingTarget without a VM: built from two SimTargets, a "guest" and a "model",
// each behind a RecordingTarget so the test sees which calls reached which, and by each one's
// state (MSR files, memory). Which MSRs the model owns, how a mixed batch is split and where it
// stops, that allocation is the guest's, and what dispose disposes.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import { GeneralProtectionError } from '../../driver/hw/cpu-fault.js';
import type { TraceRequest } from '../../driver/request.js';
import { traceRun } from '../../driver/session.js';
import type { MsrOp } from '../../driver/target.js';
import { RecordingTarget } from '../../harness/rundir/recording-target.js';
import { BorrowedMemory } from '../../harness/hybrid/borrowed-memory.js';
import { ownerOf, RoutingTarget, splitBatch, type RoutingOwnership } from '../../harness/hybrid/routing-target.js';
import { applyKnobs } from '../../harness/sim/knobs/knobs.js';
import { SimTarget, type SimTargetOptions } from '../../harness/sim/sim-target.js';
import { generateWorkload } from '../../harness/sim/workload/index.js';

const CTL = 0x570, CR3_MATCH = 0x572, ADDR0_A = 0x580, ADDR0_B = 0x581, LVT_PMI = 0x834, XSS = 0xda0;
const TSC_AUX = 0xc000_0103;

describe('which MSRs the model owns', () => {
  test.for([
    { msr: 0x560, name: 'IA32_RTIT_OUTPUT_BASE' }, { msr: 0x561, name: 'IA32_RTIT_OUTPUT_MASK_PTRS' },
    { msr: 0x570, name: 'IA32_RTIT_CTL' }, { msr: 0x571, name: 'IA32_RTIT_STATUS' }, { msr: 0x572, name: 'IA32_RTIT_CR3_MATCH' },
    { msr: 0x580, name: 'IA32_RTIT_ADDR0_A' }, { msr: 0x587, name: 'IA32_RTIT_ADDR3_B' },
    { msr: 0x38e, name: 'IA32_PERF_GLOBAL_STATUS' }, { msr: 0x390, name: 'IA32_PERF_GLOBAL_STATUS_RESET' },
    { msr: 0x391, name: 'IA32_PERF_GLOBAL_STATUS_SET' }, { msr: 0xda0, name: 'IA32_XSS' }, { msr: 0x834, name: 'x2APIC LVT PMI' },
  ])('$name goes to the model', ({ msr }) => {
    expect(ownerOf(msr)).toBe('model');
  });

  test.for([
    { msr: 0x573, name: '0x573 (between CR3_MATCH and ADDR0_A, no RTIT MSR)' }, { msr: 0x588, name: '0x588 (after ADDR3_B)' },
    { msr: 0x55f, name: '0x55f (before OUTPUT_BASE)' }, { msr: 0x562, name: '0x562 (after OUTPUT_MASK_PTRS)' },
    { msr: 0x38f, name: 'IA32_PERF_GLOBAL_CTRL' }, { msr: 0x10, name: 'IA32_TIME_STAMP_COUNTER' },
    { msr: 0xc000_0103, name: 'IA32_TSC_AUX' }, { msr: 0x6e1, name: 'IA32_PKRS' }, { msr: 0x833, name: '0x833 (x2APIC, not the LVT PMI)' },
  ])('$name stays the guest\'s', ({ msr }) => {
    expect(ownerOf(msr)).toBe('guest');
  });

  test('a batch splits into runs of consecutive ops with one owner, in order', () => {
    const ops: MsrOp[] = [
      { op: 'wrmsr', msr: CTL, value: 0n }, { op: 'rdmsr', msr: 0x571 },
      { op: 'wrmsr', msr: TSC_AUX, value: 1n }, { op: 'rdmsr', msr: TSC_AUX },
      { op: 'rdmsr', msr: CTL },
    ];
    expect(splitBatch(ops).map((r) => [r.owner, r.ops.length])).toEqual([['model', 2], ['guest', 2], ['model', 1]]);
    expect(splitBatch([])).toEqual([]);
  });
});

/** Two SimTargets, each behind a recorder, and the routing target over the recorders. */
interface Rig {
  readonly guest: SimTarget;
  readonly model: SimTarget;
  readonly g: RecordingTarget;
  readonly m: RecordingTarget;
  readonly t: RoutingTarget<RecordingTarget, RecordingTarget>;
}

const open: SimTarget[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s[Symbol.asyncDispose]();
});

/**
 * A skylake guest whose WRMSR never faults (knob swallow-gp: the sim has no MSRs besides the PT
 * unit's, so this is how a guest run succeeds) and an icelake model; `modelOver` puts the model's
 * output engine on the guest's memory, as `--pt model` does with guest RAM.
 */
async function rig(owns: RoutingOwnership = { guest: false, model: true }, o: { modelOver?: boolean; model?: Partial<SimTargetOptions> } = {}): Promise<Rig> {
  const guest = await SimTarget.create({ profile: 'skylake' });
  applyKnobs(guest, ['swallow-gp']);
  const model = await SimTarget.create({
    profile: 'icelake', label: 'model', ...o.model,
    ...(o.modelOver ? { phys: new BorrowedMemory(guest.phys) } : {}),
  });
  open.push(model, guest); // model first: its runs write into the guest's memory
  const g = new RecordingTarget(guest, () => 0), m = new RecordingTarget(model, () => 0);
  return { guest, model, g, m, t: new RoutingTarget({ guest: g, model: m, owns }) };
}

const ops = (r: RecordingTarget): string[] => r.lines.map((l) => `${l.op}${l.msr ? ` ${l.msr}` : ''}${l.fault ? ' #GP' : ''}`);

describe('RoutingTarget over two SimTargets', () => {
  test('the description is the guest\'s plus the model\'s', async () => {
    const { t } = await rig();
    expect(t.description).toBe('sim:skylake+model:icelake');
  });

  test('CPUID is the model\'s (icelake\'s signature in leaf 1, not skylake\'s); the guest is not asked', async () => {
    const { t, guest, model, g } = await rig();
    const [mine, theirs, ours] = [await t.cpuid(1, 0), await guest.cpuid(1, 0), await model.cpuid(1, 0)];
    expect(mine).not.toEqual(theirs);
    expect(mine).toEqual(ours);
    expect(g.lines).toEqual([]);
  });

  test('a PT MSR write lands in the model\'s MSR file, not the guest\'s', async () => {
    const { t, guest, model } = await rig();
    await t.wrmsr(0, ADDR0_A, 0x1234_5000n);
    expect([await t.rdmsr(0, ADDR0_A), model.unit(0).addrA[0], guest.unit(0).addrA[0]]).toEqual([0x1234_5000n, 0x1234_5000n, 0n]);
  });

  test('a PT MSR faults by the model\'s rules (CR3_MATCH bits 4:0 are reserved), with msr and value', async () => {
    const { t, g } = await rig();
    const e = await t.wrmsr(0, CR3_MATCH, 0x1001n).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GeneralProtectionError);
    expect(e).toMatchObject({ msr: CR3_MATCH, value: 0x1001n });
    expect(g.lines).toEqual([]);
  });

  test('a non-PT MSR goes to the guest: its fault is the guest\'s, and the model never sees it', async () => {
    const { t, g, m } = await rig();
    await expect(t.rdmsr(0, TSC_AUX)).rejects.toBeInstanceOf(GeneralProtectionError);
    await t.wrmsr(0, TSC_AUX, 5n);
    expect([ops(g), ops(m)]).toEqual([['rdmsr 0xc0000103 #GP', 'wrmsr 0xc0000103'], []]);
  });

  test('a mixed batch: each run of one owner is ONE msrBatch of that target, results in op order', async () => {
    const { t, g, m, model } = await rig();
    const res = await t.msrBatch(0, [
      { op: 'wrmsr', msr: ADDR0_A, value: 0x6000n },
      { op: 'wrmsr', msr: TSC_AUX, value: 1n }, { op: 'wrmsr', msr: 0x10, value: 2n },
      { op: 'rdmsr', msr: ADDR0_A }, { op: 'wrmsr', msr: ADDR0_B, value: 0x7000n },
    ]);
    expect(res.map((r) => [r.msr, r.ok ? r.value : 'gp'])).toEqual([[ADDR0_A, 0x6000n], [TSC_AUX, 1n], [0x10, 2n], [ADDR0_A, 0x6000n], [ADDR0_B, 0x7000n]]);
    expect([g.roundTrips, m.roundTrips, g.roundTripOf, m.roundTripOf]).toEqual([1, 2, [0, 0], [0, 1, 1]]);
    expect(model.unit(0).addrB[0]).toBe(0x7000n);
  });

  test('a #GP in a guest run ends the batch: the later model run never executes', async () => {
    const { t, g, m, model } = await rig();
    const res = await t.msrBatch(0, [
      { op: 'wrmsr', msr: ADDR0_A, value: 0x6000n },
      { op: 'wrmsr', msr: TSC_AUX, value: 1n }, { op: 'rdmsr', msr: TSC_AUX }, { op: 'wrmsr', msr: 0x10, value: 2n },
      { op: 'wrmsr', msr: ADDR0_B, value: 0x7000n },
    ]);
    expect(res.map((r) => r.ok)).toEqual([true, true, false]);
    expect(res[2]).toMatchObject({ op: 'rdmsr', msr: TSC_AUX, fault: { vector: '#GP' } });
    expect([ops(g), m.roundTrips, model.unit(0).addrB[0]]).toEqual([['wrmsr 0xc0000103', 'rdmsr 0xc0000103 #GP'], 1, 0n]);
  });

  test('a #GP in a model run ends the batch: the guest is never called', async () => {
    const { t, g } = await rig();
    const res = await t.msrBatch(0, [{ op: 'wrmsr', msr: CR3_MATCH, value: 0x1n }, { op: 'wrmsr', msr: TSC_AUX, value: 1n }]);
    expect([res.map((r) => r.ok), g.roundTrips]).toEqual([[false], 0]);
  });

  test('physical memory is the guest\'s: alloc, write and read reach the guest\'s memory, none the model\'s', async () => {
    const { t, guest, model, m } = await rig();
    expect(t.phys.maxContiguous).toBe(guest.phys.maxContiguous);
    const r = await t.phys.alloc(8192, 4096);
    await t.phys.write(r.base + 16n, Uint8Array.of(1, 2, 3));
    expect([guest.phys.allocatedBytes, model.phys.allocatedBytes]).toEqual([8192, 0]);
    expect([...guest.phys.readNow(r.base + 16n, 3)]).toEqual([1, 2, 3]);
    expect([...(await t.phys.read(r.base + 16n, 3))]).toEqual([1, 2, 3]);
    await t.phys.free(r);
    expect([guest.phys.allocatedBytes, m.lines]).toEqual([0, []]);
  });

  test('pmiEnable, XSAVES and XRSTORS are the model\'s', async () => {
    const { t, guest, model, g, m } = await rig();
    await t.wrmsr(0, XSS, 0x100n);
    await t.pmiEnable(0);
    const area = await t.xsaves(0, 0x100n);
    await t.xrstors(0, area, 0x100n);
    expect(ops(m)).toEqual([`wrmsr ${'0xda0'}`, 'pmi-enable', 'xsaves', 'xrstors']);
    expect(g.lines).toEqual([]);
    // The model's LVT entry is unmasked (bit 16 clear), the guest's still masked.
    expect([(await model.rdmsr(0, LVT_PMI)) & 0x1_0000n, (await guest.rdmsr(0, LVT_PMI)) & 0x1_0000n]).toEqual([0n, 0x1_0000n]);
  });

  test('a workload runs on the model (the guest stays idle) and a note goes to the guest', async () => {
    const { t, guest, model, g } = await rig();
    const ex = t.start(generateWorkload(1, { branches: 1_000 }), 0);
    expect([model.busy, guest.busy]).toEqual([true, false]);
    const kinds: string[] = [];
    for await (const e of ex.events) kinds.push(e.kind);
    await ex[Symbol.asyncDispose]();
    expect(kinds).toEqual(['exit']);
    t.note(0, 'decided');
    expect(ops(g)).toEqual(['note']);
  });

  test('a second start on a busy model CPU throws PtError bad_state at once', async () => {
    const { t } = await rig();
    await using ex = t.start(generateWorkload(1, { branches: 1_000 }), 0);
    expect(() => t.start(generateWorkload(1, { branches: 1_000 }), 0)).toThrow(expect.objectContaining({ code: 'bad_state' }));
    for await (const _ of ex.events) { /* to the exit */ }
  });

  test('a driver run over the model on the guest\'s memory writes the bytes and truth a lone SimTarget writes', async () => {
    const MODEL = { profile: 'skylake', seed: 3, topa: { pmiSkid: 256 }, trace: { truth: true, flushBytes: 256 } } as const;
    const req: TraceRequest = { output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 } };
    const w = generateWorkload(5, { branches: 20_000 });
    await using sim = await SimTarget.create({ ...MODEL });
    const a = await traceRun(sim, w, req, { figures: () => ({ written: sim.written(0) }) });
    const { t, model } = await rig(undefined, { modelOver: true, model: { ...MODEL, label: 'model' } });
    const b = await traceRun(t, w, req, { figures: () => ({ written: model.written(0) }) });
    const sha = (x: Uint8Array): string => createHash('sha256').update(x).digest('hex');
    expect(a.pmis.length).toBeGreaterThan(0);
    expect([b.stream.length, sha(b.stream), b.ledger]).toEqual([a.stream.length, sha(a.stream), a.ledger]);
    expect(model.truth(0)).toEqual(sim.truth(0));
  });
});

describe('RoutingTarget dispose respects ownership', () => {
  test('owning the model only (the runner\'s per-run target): the model is disposed, the guest keeps running', async () => {
    const { t, guest, model } = await rig({ guest: false, model: true });
    await t[Symbol.asyncDispose]();
    await expect(model.cpuid(0, 0)).rejects.toMatchObject({ code: 'bad_state' });
    await expect(guest.cpuid(0, 0)).resolves.toBeDefined();
  });

  test('owning both: both are disposed, the model first', async () => {
    const { t, guest, model } = await rig({ guest: true, model: true });
    const order: string[] = [];
    const gd = guest[Symbol.asyncDispose].bind(guest), md = model[Symbol.asyncDispose].bind(model);
    guest[Symbol.asyncDispose] = async () => { order.push('guest'); await gd(); };
    model[Symbol.asyncDispose] = async () => { order.push('model'); await md(); };
    await t[Symbol.asyncDispose]();
    expect(order).toEqual(['model', 'guest']);
    await expect(guest.cpuid(0, 0)).rejects.toMatchObject({ code: 'bad_state' });
  });

  test('owning neither: both keep running', async () => {
    const { t, guest, model } = await rig({ guest: false, model: false });
    await t[Symbol.asyncDispose]();
    await expect(Promise.all([guest.cpuid(0, 0), model.cpuid(0, 0)])).resolves.toHaveLength(2);
  });

  test('disposal is idempotent, and later calls on the routing target fail with bad_state, memory and notes included', async () => {
    const { t, g } = await rig({ guest: false, model: false });
    await t[Symbol.asyncDispose]();
    await t[Symbol.asyncDispose]();
    for (const p of [t.cpuid(0, 0), t.rdmsr(0, TSC_AUX), t.msrBatch(0, []), t.phys.read(0n, 1), t.phys.alloc(4096, 4096), t.pmiEnable(0)]) {
      await expect(p).rejects.toMatchObject({ code: 'bad_state' });
    }
    expect(() => t.start(generateWorkload(1, { branches: 10 }), 0)).toThrow(expect.objectContaining({ code: 'bad_state' }));
    t.note(0, 'late');
    expect(g.lines).toEqual([]);
  });
});
