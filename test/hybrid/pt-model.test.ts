// `--pt model` on one TCG guest: the reference model, attached
// to the guest by harness/hybrid/attach-model.ts, is the guest's PT unit. PT MSRs and CPUID go to
// the model, other MSRs to the guest; the model's output engine writes trace into real module
// buffers (the guest hashes them itself); the same run through the driver gives the same bytes,
// truth and transcript (apart from physical addresses) as SimTarget; and one VM serves many runs,
// each with a fresh model.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GeneralProtectionError } from '../../driver/hw/cpu-fault.js';
import type { TraceRequest } from '../../driver/request.js';
import { traceRun, TraceSession, type TraceResult } from '../../driver/session.js';
import type { Target } from '../../driver/target.js';
import { RecordingTarget } from '../../harness/rundir/recording-target.js';
import { attachModel } from '../../harness/hybrid/attach-model.js';
import type { TranscriptLine } from '../../harness/rundir/transcript-line.js';
import { normalTranscript } from '../../harness/rundir/normalize-transcript.js';
import type { RoutingTarget } from '../../harness/hybrid/routing-target.js';
import { probePt } from '../../harness/link/pt-probe.js';
import { QemuTarget } from '../../harness/qemu/qemu-target.js';
import { SimTarget, type SimTargetOptions } from '../../harness/sim/sim-target.js';
import { generateWorkload } from '../../harness/sim/workload/index.js';
import { qemuTestEnv } from '../qemu/env.js';

/** A transcript by buffer role, without seq and t_us (the comparison ptlab diff and replay make). */
const byRole = (lines: readonly TranscriptLine[]): string[] => normalTranscript(lines.map((l) => JSON.stringify(l)).join('\n')).map((l) => l.text);

const env = await qemuTestEnv();

const IA32_TSC_AUX = 0xc000_0103;
/** IA32_PKRS: QEMU 7.2's TCG raises #GP for a write with bits 63:32 set (test/qemu/qemu-target.test.ts). */
const IA32_PKRS = 0x6e1;
const CTL = 0x570, CR3_MATCH = 0x572, ADDR0_A = 0x580, GLOBAL_STATUS = 0x38e;

/** The model knobs both targets get (the runner's sim defaults: harness/runner/targets.ts). */
const MODEL = { profile: 'skylake', seed: 7, topa: { pmiSkid: 256 }, trace: { truth: true, flushBytes: 256 } } as const;

/** A PMI record without its wall-clock trace-off window (real round trips take real time). */
const timeless = ({ window: _w, ...p }: TraceResult['pmis'][number]) => p;

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** One driver run on `target` with the bytes the model wrote during it, plus the truth lines it added. */
async function run(target: Target, truth: () => readonly string[], written: () => number, seed: number, req: TraceRequest, sliceBranches?: number) {
  const rec = new RecordingTarget(target, () => 0);
  const before = truth().length, w0 = written();
  const res: TraceResult = await traceRun(rec, generateWorkload(seed, { branches: 30_000 }), req, {
    figures: () => ({ written: written() - w0 }), ...(sliceBranches === undefined ? {} : { sliceBranches }),
  });
  return { res, lines: rec.lines, truth: truth().slice(before) };
}

describe.skipIf(env.skip)(`a QEMU guest with the model attached (--pt model)${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  /** The suite's one VM. */
  let qemu: QemuTarget;
  /** The current run's target: the model attached to `qemu`. */
  let t: RoutingTarget<QemuTarget, SimTarget>;
  let sim: SimTarget;

  /** Disposes the current model and attaches a fresh one (what the runner does per run); the VM stays. */
  const fresh = async (o: { profile?: 'skylake' | 'icelake' } = {}): Promise<RoutingTarget<QemuTarget, SimTarget>> => {
    await t[Symbol.asyncDispose]();
    t = await attachModel(qemu, { ...MODEL, ...o });
    return t;
  };

  beforeAll(async () => {
    if (env.skip) return;
    // IA32_TSC_AUX and IA32_PKRS go to the guest, outside the PT allowlist; the test guest's module lists them.
    qemu = await QemuTarget.launch({ accel: 'tcg', cpu: 'max', smp: 1, memoryMiB: 256, kernel: env.image.kernel, initrd: env.image.initrd }, { timeoutMs: 90_000, allowMsr: true });
    t = await attachModel(qemu, MODEL);
    const simOpts: SimTargetOptions = { ...MODEL };
    sim = await SimTarget.create(simOpts);
  });

  afterAll(async () => {
    await t?.[Symbol.asyncDispose]();
    await qemu?.dispose();
    await sim?.[Symbol.asyncDispose]();
  });

  describe('what the model owns', () => {
    test('the description names the accelerator and the model profile', () => {
      expect(t.description).toBe('qemu:tcg+model:skylake');
    });

    test('CPUID comes from the model: GenuineIntel with CPUID.(EAX=07H,ECX=0):EBX[25] (Intel PT) set', async () => {
      const l0 = await t.cpuid(0, 0), l7 = await t.cpuid(7, 0);
      const v = Buffer.alloc(12);
      v.writeUInt32LE(l0.ebx, 0); v.writeUInt32LE(l0.edx, 4); v.writeUInt32LE(l0.ecx, 8);
      expect({ vendor: v.toString('latin1'), pt: (l7.ebx >>> 25) & 1 }).toEqual({ vendor: 'GenuineIntel', pt: 1 });
    });

    test.for([
      { leaf: 0x14, sub: 0 }, { leaf: 0x14, sub: 1 }, { leaf: 0xd, sub: 1 }, { leaf: 0xd, sub: 8 }, { leaf: 0x8000_0008, sub: 0 },
    ])('CPUID leaf $leaf.$sub equals the sim target of the same profile', async ({ leaf, sub }) => {
      expect(await t.cpuid(leaf, sub)).toEqual(await sim.cpuid(leaf, sub));
    });

    test('the CPUID-only PT probe finds Intel PT on the model (the guest CPU itself has none under TCG)', async () => {
      expect([(await probePt((l, s) => t.cpuid(l, s))).available, (await qemu.ptAvailable()).available]).toEqual([true, false]);
    });

    test('a PT MSR write lands in the model\'s MSR file', async () => {
      await t.wrmsr(0, ADDR0_A, 0x1234_5000n);
      expect([await t.rdmsr(0, ADDR0_A), t.model.unit(0).addrA[0]]).toEqual([0x1234_5000n, 0x1234_5000n]);
    });

    test('a PT MSR faults by the model\'s rules: CR3_MATCH bits 4:0 are reserved (docs/sdm/msrs.md §7)', async () => {
      const e = await t.wrmsr(0, CR3_MATCH, 0x1001n).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(GeneralProtectionError);
      expect(e).toMatchObject({ msr: CR3_MATCH, value: 0x1001n });
    });

    test('IA32_PERF_GLOBAL_STATUS is the model\'s: a write is #GP (read-only, docs/sdm/msrs.md §11)', async () => {
      const e = await t.wrmsr(0, GLOBAL_STATUS, 0n).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(GeneralProtectionError);
    });

    test('a non-PT MSR still goes to the guest: IA32_TSC_AUX reads back what was written', async () => {
      const old = await t.rdmsr(0, IA32_TSC_AUX);
      await t.wrmsr(0, IA32_TSC_AUX, 0x77n);
      expect(await t.rdmsr(0, IA32_TSC_AUX)).toBe(0x77n);
      await t.wrmsr(0, IA32_TSC_AUX, old);
    });

    test('a guest MSR #GP is the guest module\'s (IA32_PKRS with bit 32 set)', async () => {
      const e = await t.wrmsr(0, IA32_PKRS, 1n << 32n).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(GeneralProtectionError);
      expect((e as GeneralProtectionError).reason).toContain('guest');
    });

    test('a mixed batch runs in order across model and guest and stops at the first #GP', async () => {
      const res = await t.msrBatch(0, [
        { op: 'wrmsr', msr: IA32_TSC_AUX, value: 0x5n },
        { op: 'wrmsr', msr: ADDR0_A, value: 0x6000n },
        { op: 'rdmsr', msr: IA32_TSC_AUX },
        { op: 'rdmsr', msr: ADDR0_A },
        { op: 'wrmsr', msr: CR3_MATCH, value: 0x1n },
        { op: 'wrmsr', msr: ADDR0_A, value: 0x7000n },
      ]);
      expect(res.map((r) => (r.ok ? r.value : 'gp'))).toEqual([0x5n, 0x6000n, 0x5n, 0x6000n, 'gp']);
      expect(await t.rdmsr(0, ADDR0_A)).toBe(0x6000n);
      await t.wrmsr(0, IA32_TSC_AUX, 0n);
      await t.wrmsr(0, ADDR0_A, 0n);
    });

    test('the guest CPU itself is untouched: CTL written through the model never reached it', async () => {
      await t.wrmsr(0, CTL, 0x2000n); // BranchEn, TraceEn=0
      const guest = await qemu.helper.rdmsr(0, CTL);
      expect([await t.rdmsr(0, CTL), guest]).toEqual([0x2000n, 0n]);
      await t.wrmsr(0, CTL, 0n);
    });
  });

  describe('trace memory lives in the guest', () => {
    test('after a ToPA run the guest\'s own SHA-256 of every module buffer equals the bytes read through the shared file', async () => {
      const req: TraceRequest = { output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 } };
      const s = await TraceSession.open(t, req);
      try {
        await s.start();
        await using ex = t.start(generateWorkload(3, { branches: 60_000 }), 0);
        await s.run(ex);
        const res = await s.stop(() => ({ written: t.model.written(0) }));
        expect(res.pmis.length).toBeGreaterThan(0); // the table grew: more buffers than the first plan
        const bufs = qemu.moduleBuffers();
        const pairs = [];
        for (const b of bufs) pairs.push([await qemu.helper.hash(b.id), sha256(await t.phys.read(b.base, b.blockSize))]);
        expect(bufs.length).toBeGreaterThanOrEqual(4);
        expect(pairs.map(([g]) => g)).toEqual(pairs.map(([, h]) => h));
        // Not trivially equal: the output regions hold trace, so their hashes are not those of zeros.
        const zeros = bufs.map((b) => sha256(new Uint8Array(b.blockSize)));
        expect(pairs.filter(([g], i) => g !== zeros[i]).length).toBeGreaterThanOrEqual(3);
      } finally {
        await s.release();
      }
    });

    test('the guest reads the PSB the model wrote at offset 0 of a single-range buffer (docs/sdm/packets.md PSB: 02 82 ×8)', async () => {
      const s = await TraceSession.open(t, { output: { scheme: 'single-range', size: 64 * 1024 } });
      try {
        await s.start();
        await using ex = t.start(generateWorkload(5, { branches: 2_000 }), 0);
        await s.run(ex);
        await s.stop(() => ({ written: t.model.written(0) }));
        const [buf] = qemu.moduleBuffers();
        const inGuest = await qemu.helper.bufRead(buf!.id, 0, 16);
        expect(Buffer.from(inGuest).toString('hex')).toBe('0282'.repeat(8));
      } finally {
        await s.release();
      }
    });
  });

  describe('the memory oracle over guest RAM (docs/design.md "The memory oracle")', () => {
    test('a module buffer freed while the model traces into it is free-while-tracing; module buffers are the driver\'s memory', async () => {
      const m = await fresh();
      const s = await TraceSession.open(m, { output: { scheme: 'single-range', size: 64 * 1024 } });
      await s.start();
      const [buf] = qemu.moduleBuffers();
      expect(m.model.phys.owns(buf!.base, 4096)).toBe(true);
      // The bug the oracle exists for: a free with TraceEn still 1, through the run's target.
      await m.phys.free({ base: buf!.base, size: 64 * 1024 });
      expect(m.model.oracle.events.map((e) => [e.kind, e.addr])).toEqual([['free-while-tracing', buf!.base]]);
      expect(m.model.phys.owns(buf!.base, 4096)).toBe(false);
      await m.wrmsr(0, CTL, 0n);
    });
  });

  describe('agreement with the sim target (same seed, workload and programming)', () => {
    const cases: readonly { name: string; req: TraceRequest; pmis: boolean; slice?: number }[] = [
      { name: 'single-range', req: { output: { scheme: 'single-range', size: 256 * 1024 } }, pmis: false },
      { name: 'ToPA grow', req: { output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 } }, pmis: true },
      { name: 'ToPA circular-fresh', req: { output: { scheme: 'topa', policy: 'circular-fresh', regionSize: 4096, regions: 4 } }, pmis: true },
      { name: 'ToPA chain', req: { output: { scheme: 'topa', policy: 'chain', regionSize: 8192, regions: 2 } }, pmis: true },
      {
        name: 'ToPA grow with XSAVES context switches every 4000 branches',
        req: { output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 }, switching: 'xsaves' }, pmis: true, slice: 4000,
      },
    ];

    test.for(cases)('$name: identical trace.pt, truth, ledger and PMIs, and transcripts equal apart from physical addresses', async ({ req, pmis, slice }) => {
      await using sim = await SimTarget.create({ ...MODEL });
      const m = await fresh();
      const a = await run(sim, () => sim.truth(0), () => sim.written(0), 11, req, slice);
      const b = await run(m, () => m.model.truth(0), () => m.model.written(0), 11, req, slice);
      expect(a.res.pmis.length > 0).toBe(pmis);
      expect(a.res.switches > 0).toBe(slice !== undefined);
      expect(a.truth.length).toBeGreaterThan(0);
      expect(Buffer.from(b.res.stream).equals(Buffer.from(a.res.stream))).toBe(true);
      expect(b.truth).toEqual(a.truth);
      expect(b.res.ledger).toEqual(a.res.ledger);
      expect(b.res.pmis.map(timeless)).toEqual(a.res.pmis.map(timeless));
      expect(byRole(b.lines)).toEqual(byRole(a.lines));
    });

    test('the transcripts do differ in physical addresses (the buffers are the guest\'s, not the sim\'s)', async () => {
      const req: TraceRequest = { output: { scheme: 'single-range', size: 64 * 1024 } };
      await using sim = await SimTarget.create({ ...MODEL });
      const m = await fresh();
      const a = await run(sim, () => sim.truth(0), () => sim.written(0), 12, req);
      const b = await run(m, () => m.model.truth(0), () => m.model.written(0), 12, req);
      const base = (lines: typeof a.lines) => lines.find((l) => l.op === 'alloc')!.result;
      expect(base(b.lines)).not.toBe(base(a.lines));
      expect(b.lines.map(({ t_us: _t, ...l }) => l)).not.toEqual(a.lines.map(({ t_us: _t, ...l }) => l));
    });
  });

  describe('one VM, a fresh model per run', () => {
    test('disposing a run\'s target stops the model\'s workload (its events end) and leaves the VM running', async () => {
      const ex = t.start(generateWorkload(1, { branches: 1_000_000 }), 0, { sliceBranches: 100 });
      const it = ex.events[Symbol.asyncIterator]();
      expect((await it.next()).value).toMatchObject({ kind: 'slice' });
      await fresh();
      expect((await it.next()).done).toBe(true);
      await ex[Symbol.asyncDispose]();
      expect([qemu.state, await qemu.rdmsr(0, IA32_TSC_AUX).then(() => 'answers')]).toEqual(['running', 'answers']);
    });

    test('a fresh model is a CPU fresh from reset: the PT MSRs read their reset values again', async () => {
      await t.wrmsr(0, ADDR0_A, 0x9000n);
      await fresh();
      expect(await t.rdmsr(0, ADDR0_A)).toBe(0n);
    });

    test('each run\'s model has its own profile, and the description follows it', async () => {
      const d = (await fresh({ profile: 'icelake' })).description;
      expect([d, (await fresh()).description]).toEqual(['qemu:tcg+model:icelake', 'qemu:tcg+model:skylake']);
    });

    test('the model writes only into the guest\'s module buffers: a freed buffer is out of its reach', async () => {
      const r = await t.phys.alloc(4096, 4096);
      t.model.phys.writeNow(r.base + 8n, Uint8Array.of(0x5a));
      expect([...(await qemu.helper.bufRead(qemu.moduleBuffer(r.base)!.id, 8, 1))]).toEqual([0x5a]);
      await t.phys.free(r);
      expect(() => t.model.phys.writeNow(r.base + 8n, Uint8Array.of(1))).toThrow(expect.objectContaining({ code: 'bad_address' }));
    });
  });
});
