// The behaviour every Target must show (docs/design.md "The target interface"): one suite, run
// against the sim for every profile (test/sim/contract.test.ts) and against real targets
// where they exist. It registers vitest blocks; it is not a test file itself.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AllocationError, PtError } from '../driver/base/errors.js';
import { GeneralProtectionError } from '../driver/hw/cpu-fault.js';
import { PT_CPUID_QUERIES } from '../driver/hw/cpuid.js';
import type { Target, TargetEvent, Workload } from '../driver/target.js';

/** What a target tells the suite about itself. */
export interface ContractKnobs {
  /** CPUID (leaf, subleaf) pairs the probe reads. Default: driver/hw/cpuid.ts PT_CPUID_QUERIES. */
  readonly probeLeaves?: readonly (readonly [number, number])[];
  /** CPUID.0 vendor string, if the suite should check it. */
  readonly vendor?: string;
  /**
   * An MSR whose RDMSR raises #GP on this target; undefined where no RDMSR faults (QEMU 7.2's
   * TCG returns 0 for every unknown MSR: test/qemu/tcg-knobs.ts).
   */
  readonly absentMsr: number | undefined;
  /** An MSR that is safe to write, and two values it accepts and reads back unchanged. */
  readonly writable: { readonly msr: number; readonly values: readonly [bigint, bigint] };
  /** A write that raises #GP because it sets a reserved bit (best: of `writable.msr`). */
  readonly reservedWrite: { readonly msr: number; readonly value: bigint };
  /** A physical address outside every region the target backs. */
  readonly outOfRangeAddr: bigint;
  /** Whether XSAVES of PT state (IA32_XSS[8]) works; false: xsaves must fail with code 'unsupported'. */
  readonly xsavesPt: boolean;
  /** The logical processor to use. Default 0. */
  readonly cpu?: number;
  /**
   * A workload this target can run to its exit (docs/design.md "Workloads"), for the `start` section;
   * absent: the target opts out of it (the section is skipped with that reason).
   */
  readonly startWorkload?: Workload;
  /** The target raises `slice` events for StartOpts.sliceBranches. Default false. */
  readonly slices?: boolean;
}

export type MakeTarget = () => Promise<{ target: Target; knobs: ContractKnobs }>;

/** Registers the shared Target behaviour suite for one target. */
export function targetContract(name: string, make: MakeTarget): void {
  describe(`Target contract: ${name}`, () => {
    let t: Target;
    let k: ContractKnobs;
    let cpu: number;
    beforeAll(async () => {
      ({ target: t, knobs: k } = await make());
      cpu = k.cpu ?? 0;
    });
    afterAll(async () => {
      await t?.[Symbol.asyncDispose]();
    });

    describe('cpuid', () => {
      test('every probe leaf answers with four 32-bit registers', async () => {
        for (const [leaf, sub] of k.probeLeaves ?? PT_CPUID_QUERIES) {
          const r = await t.cpuid(leaf, sub, cpu);
          for (const v of [r.eax, r.ebx, r.ecx, r.edx]) expect(Number.isInteger(v) && v >= 0 && v <= 0xffff_ffff).toBe(true);
        }
      });
      test('leaf 0 names the vendor', async (ctx) => {
        if (k.vendor === undefined) ctx.skip();
        const r = await t.cpuid(0, 0, cpu);
        const b = Buffer.alloc(12);
        b.writeUInt32LE(r.ebx, 0); b.writeUInt32LE(r.edx, 4); b.writeUInt32LE(r.ecx, 8);
        expect(b.toString('latin1')).toBe(k.vendor);
      });
    });

    describe('MSR faults are typed data', () => {
      test('RDMSR of an absent MSR throws GeneralProtectionError naming the MSR', async (ctx) => {
        if (k.absentMsr === undefined) ctx.skip('no RDMSR faults on this target (QEMU TCG returns 0 for unknown MSRs)');
        const e = await t.rdmsr(cpu, k.absentMsr!).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(GeneralProtectionError);
        expect(e).toMatchObject({ code: 'cpu_fault', vector: '#GP', msr: k.absentMsr });
        expect((e as GeneralProtectionError).reason.length).toBeGreaterThan(0);
      });
      test('a reserved-bit WRMSR throws GeneralProtectionError with msr and value', async () => {
        const e = await t.wrmsr(cpu, k.reservedWrite.msr, k.reservedWrite.value).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(GeneralProtectionError);
        expect(e).toMatchObject({ msr: k.reservedWrite.msr, value: k.reservedWrite.value });
      });
      test('a write reads back', async () => {
        await t.wrmsr(cpu, k.writable.msr, k.writable.values[1]);
        expect(await t.rdmsr(cpu, k.writable.msr)).toBe(k.writable.values[1]);
      });
      test('a faulting write changes nothing', async () => {
        await t.wrmsr(cpu, k.writable.msr, k.writable.values[0]);
        await t.wrmsr(cpu, k.reservedWrite.msr, k.reservedWrite.value).catch(() => undefined);
        expect(await t.rdmsr(cpu, k.writable.msr)).toBe(k.writable.values[0]);
      });
    });

    describe('msrBatch', () => {
      test('stops at its first #GP: earlier writes took effect, later ones did not run', async () => {
        await t.wrmsr(cpu, k.writable.msr, k.writable.values[1]);
        const res = await t.msrBatch(cpu, [
          { op: 'wrmsr', msr: k.writable.msr, value: k.writable.values[0] },
          { op: 'wrmsr', msr: k.reservedWrite.msr, value: k.reservedWrite.value },
          { op: 'wrmsr', msr: k.writable.msr, value: k.writable.values[1] },
        ]);
        expect(res.map((r) => r.ok)).toEqual([true, false]);
        const bad = res[1]!;
        expect(bad.ok ? undefined : bad.fault).toMatchObject({ vector: '#GP', msr: k.reservedWrite.msr, value: k.reservedWrite.value });
        expect(await t.rdmsr(cpu, k.writable.msr)).toBe(k.writable.values[0]);
      });
      test('reads in a batch return the values', async () => {
        await t.wrmsr(cpu, k.writable.msr, k.writable.values[1]);
        const res = await t.msrBatch(cpu, [{ op: 'rdmsr', msr: k.writable.msr }]);
        expect(res).toEqual([{ ok: true, op: 'rdmsr', msr: k.writable.msr, value: k.writable.values[1] }]);
      });
    });

    describe('physical memory', () => {
      test('allocation honours size alignment and zero-fills', async () => {
        const size = Math.min(64 * 1024, t.phys.maxContiguous);
        const r = await t.phys.alloc(size, size);
        try {
          expect(r.base % BigInt(size)).toBe(0n);
          expect((await t.phys.read(r.base, size)).every((b) => b === 0)).toBe(true);
        } finally {
          await t.phys.free(r);
        }
      });
      test('allocation beyond maxContiguous throws AllocationError', async () => {
        const e = await t.phys.alloc(t.phys.maxContiguous * 2, 4096).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(AllocationError);
      });
      test('write then read round-trips', async () => {
        const r = await t.phys.alloc(8192, 4096);
        try {
          const data = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7) & 0xff);
          await t.phys.write(r.base + 100n, data);
          expect(await t.phys.read(r.base + 100n, data.length)).toEqual(data);
        } finally {
          await t.phys.free(r);
        }
      });
      test('a read into a caller\'s array fills only its first bytes and returns a view of them; a short array is bad_config', async () => {
        const r = await t.phys.alloc(8192, 4096);
        try {
          const data = Uint8Array.from({ length: 300 }, (_, i) => (i * 13 + 1) & 0xff);
          await t.phys.write(r.base + 8n, data);
          const into = new Uint8Array(400).fill(0xee);
          const got = await t.phys.read(r.base + 8n, 300, { into: into.subarray(50) });
          expect(got.buffer).toBe(into.buffer);
          expect(got.byteOffset).toBe(50);
          expect(got).toEqual(data);
          expect(into.subarray(0, 50).every((b) => b === 0xee) && into.subarray(350).every((b) => b === 0xee)).toBe(true);
          // Untouched memory reads zeros into the array too (never the array's old bytes).
          const zeros = await t.phys.read(r.base + 4096n, 16, { into: new Uint8Array(16).fill(0xee) });
          expect([...zeros]).toEqual(new Array(16).fill(0));
          const e = await t.phys.read(r.base, 16, { into: new Uint8Array(15) }).catch((x: unknown) => x);
          expect(e).toBeInstanceOf(PtError);
          expect((e as PtError).code).toBe('bad_config');
        } finally {
          await t.phys.free(r);
        }
      });
      test('an access outside memory throws PtError bad_address', async () => {
        const e = await t.phys.read(k.outOfRangeAddr, 8).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(PtError);
        expect((e as PtError).code).toBe('bad_address');
      });
    });

    describe('XSAVES of PT state', () => {
      test('works, or fails with code unsupported where the CPU lacks IA32_XSS[8]', async () => {
        const r = await t.xsaves(cpu, 1n << 8n).then((a) => a, (x: unknown) => x);
        if (k.xsavesPt) {
          expect(r).toBeInstanceOf(Uint8Array);
          await t.xrstors(cpu, r as Uint8Array, 1n << 8n);
        } else {
          expect(r).toBeInstanceOf(PtError);
          expect((r as PtError).code).toBe('unsupported');
        }
      });
    });

    describe('start (a workload run)', () => {
      const run = async (o: { sliceBranches?: number } = {}): Promise<TargetEvent[]> => {
        const out: TargetEvent[] = [];
        await using ex = t.start(k.startWorkload!, cpu, o);
        for await (const e of ex.events) out.push(e);
        return out;
      };
      test('the events end with exactly one exit with code 0', async (ctx) => {
        if (!k.startWorkload) ctx.skip();
        const events = await run();
        expect(events.filter((e) => e.kind === 'exit')).toEqual([{ kind: 'exit', cpu, code: 0 }]);
        expect(events[events.length - 1]!.kind).toBe('exit');
      });
      test('with TraceEn=0 a run raises no pmi and no fault', async (ctx) => {
        if (!k.startWorkload) ctx.skip();
        const events = await run();
        expect(events.filter((e) => e.kind === 'pmi' || e.kind === 'fault')).toEqual([]);
      });
      test('sliceBranches gives slice events with growing branch counts before the exit', async (ctx) => {
        if (!k.startWorkload || !k.slices) ctx.skip();
        const slices = (await run({ sliceBranches: 100 })).filter((e) => e.kind === 'slice');
        expect(slices.length).toBeGreaterThan(0);
        const counts = slices.map((e) => (e.kind === 'slice' ? e.branches : 0));
        expect(counts).toEqual([...counts].sort((a, b) => a - b));
      });
      test('disposing an execution stops it: its events end and the CPU can start again', async (ctx) => {
        if (!k.startWorkload || !k.slices) ctx.skip();
        const ex = t.start(k.startWorkload!, cpu, { sliceBranches: 100 });
        const it = ex.events[Symbol.asyncIterator]();
        expect((await it.next()).value).toMatchObject({ kind: 'slice' });
        await ex[Symbol.asyncDispose]();
        expect((await it.next()).done).toBe(true);
        expect((await run()).map((e) => e.kind)).toContain('exit');
      });
      test('a second start on a busy CPU throws PtError bad_state', async (ctx) => {
        if (!k.startWorkload) ctx.skip();
        await using ex = t.start(k.startWorkload!, cpu);
        expect(() => t.start(k.startWorkload!, cpu)).toThrow(expect.objectContaining({ code: 'bad_state' }));
        for await (const _ of ex.events) { /* run to the end */ }
      });
      test('an aborted signal fails the start or its first event with PtError aborted', async (ctx) => {
        if (!k.startWorkload) ctx.skip();
        const ac = new AbortController();
        ac.abort(new Error('test'));
        const first = async () => {
          await using ex = t.start(k.startWorkload!, cpu, { signal: ac.signal });
          await ex.events[Symbol.asyncIterator]().next();
        };
        await expect(first()).rejects.toMatchObject({ code: 'aborted' });
      });
    });

    describe('signals and lifetime', () => {
      test('an already-aborted signal rejects with PtError aborted', async () => {
        const ac = new AbortController();
        ac.abort(new Error('test'));
        for (const p of [
          t.cpuid(0, 0, cpu, { signal: ac.signal }),
          t.rdmsr(cpu, k.writable.msr, { signal: ac.signal }),
          t.wrmsr(cpu, k.writable.msr, k.writable.values[0], { signal: ac.signal }),
          t.msrBatch(cpu, [], { signal: ac.signal }),
          t.pmiEnable(cpu, { signal: ac.signal }),
          t.phys.read(0n, 1, { signal: ac.signal }),
        ]) {
          await expect(p).rejects.toMatchObject({ code: 'aborted' });
        }
      });
      test('disposal is idempotent and later calls fail with bad_state', async () => {
        const { target } = await make();
        await target[Symbol.asyncDispose]();
        await target[Symbol.asyncDispose]();
        for (const p of [target.cpuid(0, 0), target.rdmsr(cpu, k.writable.msr), target.msrBatch(cpu, []), target.phys.read(0n, 1)]) {
          await expect(p).rejects.toMatchObject({ code: 'bad_state' });
        }
      });
    });
  });
}
