// The invariant (docs/design.md "The invariant"): nothing PT may write is freed while TraceEn may be
// 1. Every way out of a trace run — the workload faults, the run is aborted, the link dies — runs the
// disable sequence and reads TraceEn=0 back before anything is freed; where that cannot be
// confirmed, the buffers are leaked and reported, never freed. Checked on the model, whose memory
// oracle sees any free of memory PT may still write.
import { describe, expect, test } from 'vitest';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import type { TraceRequest } from '../../driver/request.js';
import { traceRun, TraceSession } from '../../driver/session.js';
import type { Target, Workload } from '../../driver/target.js';
import { freeOrLeak, type Teardown } from '../../driver/teardown.js';
import { RecordingTarget } from '../../harness/rundir/recording-target.js';
import { PtError } from '../../driver/base/errors.js';
import { InjectingTarget } from '../../harness/crash/inject.js';
import { filterEvents } from '../../harness/scenarios/kit/target-wrap.js';
import { SimTarget } from '../../harness/sim/sim-target.js';
import { generateWorkload } from '../../harness/sim/workload/index.js';

const GROW: TraceRequest = { output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 } };
const CTL = IA32_RTIT_CTL.address;

async function sim(): Promise<SimTarget> {
  return SimTarget.create({ profile: 'skylake', memory: { ramSize: 64 * 2 ** 20 }, topa: { pmiSkid: 256 } });
}

/** What the model says once the run let go: oracle events, CPUs tracing, bytes allocated. */
function after(t: SimTarget): { corrupt: string[]; tracing: number[]; allocated: number } {
  return { corrupt: t.oracle.events.map((e) => e.kind), tracing: t.tracingCpus(), allocated: t.phys.allocatedBytes };
}

/** A workload the model cannot run: it cannot be placed. */
const FAULTING: Workload = { name: 'no-model', image: new Uint8Array(16), base: 0x1000_0000n, entry: 0x1000_0000n };

describe('traceRun gives its buffers back only once TraceEn=0 is read back', () => {
  test('when the workload faults after the enable: disable and read-back, then every buffer freed; no corrupt event', async () => {
    await using t = await sim();
    // The workload's first event is a fault (a signal killed it, say), after the late enable.
    const faulting = filterEvents(t, async function* (_events, _w, cpu) {
      yield { kind: 'fault', cpu, error: new PtError('target_failed', 'the workload was killed by signal 11') };
    });
    const rec = new RecordingTarget(faulting, () => 0);
    const seen: Teardown[] = [];
    await expect(traceRun(rec, generateWorkload(3), GROW, { onTeardown: (x) => seen.push(x) })).rejects.toThrow(/signal 11/);
    expect(after(t)).toEqual({ corrupt: [], tracing: [], allocated: 0 });
    expect(seen).toEqual([expect.objectContaining({ traceOff: true, leaked: [], freed: 4 * 4096 })]);
    const ops = rec.lines.map((l) => `${l.op}${l.msr ? ` ${l.msr}` : ''}`);
    const firstFree = ops.indexOf('free');
    expect(ops.slice(firstFree - 2, firstFree)).toEqual([`wrmsr 0x${CTL.toString(16)}`, `rdmsr 0x${CTL.toString(16)}`]);
  });

  test('when the workload cannot be placed: nothing was enabled, and every buffer is freed', async () => {
    await using t = await sim();
    const rec = new RecordingTarget(t, () => 0);
    const seen: Teardown[] = [];
    await expect(traceRun(rec, FAULTING, GROW, { onTeardown: (x) => seen.push(x) })).rejects.toThrow(/WorkloadModel/);
    expect(after(t)).toEqual({ corrupt: [], tracing: [], allocated: 0 });
    expect(seen).toEqual([expect.objectContaining({ traceOff: true, leaked: [], freed: 4 * 4096 })]);
    const enables = rec.lines.filter((l) => l.op === 'wrmsr' && l.msr === `0x${CTL.toString(16)}` && (BigInt(l.value!) & 1n) === 1n);
    expect(enables).toEqual([]);
  });

  test('when the run is aborted mid-trace: the teardown runs with its own deadline, not the aborted signal', async () => {
    await using t = await sim();
    const abort = new AbortController();
    const inj = new InjectingTarget(t, { at: 30, mode: 'abort', abort });
    const seen: Teardown[] = [];
    await expect(traceRun(inj, generateWorkload(3, { branches: 60_000 }), GROW, { signal: abort.signal, onTeardown: (x) => seen.push(x) }))
      .rejects.toMatchObject({ code: 'aborted' });
    expect(after(t)).toEqual({ corrupt: [], tracing: [], allocated: 0 });
    expect(seen[0]).toMatchObject({ traceOff: true, leaked: [] });
  });

  test('when an answer is lost after the enable took effect: tracing is still cleared before the free', async () => {
    await using t = await sim();
    // Operations: 14 CPUID probes and the fail-safe read, then the plan's allocations and table writes,
    // the held workload's placement, pmiEnable, and the enable batch; find the enable batch and lose its answer.
    const count = new InjectingTarget(t);
    const s = await TraceSession.open(count, GROW);
    const enableAt = count.ops + 3; // placed, pmiEnable, then the enable batch
    await s.release();
    await using t2 = await sim();
    const inj = new InjectingTarget(t2, { at: enableAt, mode: 'timeout' });
    await expect(traceRun(inj, generateWorkload(3), GROW)).rejects.toMatchObject({ failure: 'timeout' });
    expect(inj.hit).toBe('msrBatch');
    expect(after(t2)).toEqual({ corrupt: [], tracing: [], allocated: 0 });
  });

  test('when the link dies mid-run: nothing is freed, every buffer is reported leaked with its role', async () => {
    await using t = await sim();
    const inj = new InjectingTarget(t, { at: 40, mode: 'drop' });
    const seen: Teardown[] = [];
    await expect(traceRun(inj, generateWorkload(3, { branches: 60_000 }), GROW, { onTeardown: (x) => seen.push(x) })).rejects.toMatchObject({ failure: 'closed' });
    const td = seen[0]!;
    expect(td.traceOff).toBe(false);
    expect(td.why).toMatch(/tracing could not be confirmed off/);
    const roles = td.leaked.map((b) => b.role);
    expect(roles.filter((r) => r === 'ToPA table')).toEqual(['ToPA table']);
    expect(roles.length).toBeGreaterThanOrEqual(4);
    expect(roles.filter((r) => r !== 'ToPA table').every((r) => r === 'output region')).toBe(true);
    expect(after(t).corrupt).toEqual([]);
    expect(after(t).allocated).toBe(td.leaked.reduce((n, b) => n + b.region.size, 0));
  });
});

describe('freeOrLeak', () => {
  test('a CPU whose IA32_RTIT_CTL still reads TraceEn=1 after the disable keeps every buffer allocated', async () => {
    await using t = await sim();
    const r = await t.phys.alloc(4096, 4096);
    const on = IA32_RTIT_CTL.encode({ User: true, BranchEn: true, TraceEn: true });
    await t.wrmsr(0, CTL, on);
    // A CPU whose disable does not take (something sets TraceEn again): every CTL write keeps TraceEn=1.
    const stuck: Target = Object.create(t, {
      msrBatch: { value: (cpu: number, ops: Parameters<Target['msrBatch']>[1], o: Parameters<Target['msrBatch']>[2]) => t.msrBatch(cpu, ops.map((x) => (x.op === 'wrmsr' && x.msr === CTL ? { ...x, value: x.value | 1n } : x)), o) },
    }) as Target;
    const td = await freeOrLeak(stuck, [{ region: r, role: 'output region' }], [{ cpu: 0, ctl: on }]);
    expect(td).toMatchObject({ traceOff: false, freed: 0, leaked: [{ region: r, role: 'output region' }] });
    expect(td.why, td.why).toMatch(/still reads TraceEn=1/);
    expect(t.phys.owns(r.base, 4096)).toBe(true);
  });

  test('a CPU that never traced for us is not written at all', async () => {
    await using t = await sim();
    const rec = new RecordingTarget(t, () => 0);
    const r = await rec.phys.alloc(4096, 4096);
    const td = await freeOrLeak(rec, [{ region: r, role: 'buffer' }], []);
    expect(td).toMatchObject({ traceOff: true, freed: 4096, leaked: [] });
    expect(rec.lines.map((l) => l.op)).toEqual(['alloc', 'free']);
  });
});
