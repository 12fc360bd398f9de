// The model as the PT unit of a machine whose RAM it cannot borrow (an inventory's `pt: model`,
// docs/hosts.md): attachOwnModel over a SimTarget standing in for the machine, behind a recorder so
// the test sees what reached it. Physical memory is the model's own; MSRs outside the PT unit are
// still the machine's; a driver run writes the bytes and truth a lone SimTarget writes.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import type { TraceRequest } from '../../driver/request.js';
import { traceRun } from '../../driver/session.js';
import { RecordingTarget } from '../../harness/rundir/recording-target.js';
import { attachOwnModel } from '../../harness/hybrid/attach-own-model.js';
import { applyKnobs } from '../../harness/sim/knobs/knobs.js';
import { SimTarget } from '../../harness/sim/sim-target.js';
import { generateWorkload } from '../../harness/sim/workload/index.js';

const TSC_AUX = 0xc000_0103;
const open: AsyncDisposable[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s[Symbol.asyncDispose]();
});

/** A "machine" (a skylake SimTarget whose non-PT WRMSR never faults) behind a recorder. */
async function machine(): Promise<{ sim: SimTarget; rec: RecordingTarget }> {
  const sim = await SimTarget.create({ profile: 'skylake' });
  applyKnobs(sim, ['swallow-gp']);
  open.push(sim);
  return { sim, rec: new RecordingTarget(sim, () => 0) };
}

describe('attachOwnModel: the model with its own memory', () => {
  test('the description names the machine and the model; memory is the model\'s, none reaches the machine', async () => {
    const { sim, rec } = await machine();
    const t = await attachOwnModel(rec, { profile: 'icelake', memory: { ramSize: 16 * 2 ** 20 } });
    open.unshift(t);
    const r = await t.phys.alloc(8192, 4096);
    await t.phys.write(r.base, Uint8Array.of(7, 8));
    expect([t.description, t.memory, t.model.phys.allocatedBytes, sim.phys.allocatedBytes, [...t.model.phys.readNow(r.base, 2)], rec.lines])
      .toEqual(['sim:skylake+model:icelake', 'model', 8192, 0, [7, 8], []]);
  });

  test('an MSR outside the PT unit still goes to the machine', async () => {
    const { rec } = await machine();
    const t = await attachOwnModel(rec, { profile: 'skylake' });
    open.unshift(t);
    await t.wrmsr(0, TSC_AUX, 3n);
    expect(rec.lines.map((l) => `${l.op} ${l.msr}`)).toEqual(['wrmsr 0xc0000103']);
  });

  test('a driver run writes the bytes, ledger and truth a lone SimTarget writes', async () => {
    const MODEL = { profile: 'skylake', seed: 3, topa: { pmiSkid: 256 }, trace: { truth: true, flushBytes: 256 } } as const;
    const req: TraceRequest = { output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 } };
    const w = generateWorkload(5, { branches: 20_000 });
    await using sim = await SimTarget.create({ ...MODEL });
    const a = await traceRun(sim, w, req, { figures: () => ({ written: sim.written(0) }) });
    const { rec } = await machine();
    const t = await attachOwnModel(rec, { ...MODEL });
    open.unshift(t);
    const b = await traceRun(t, w, req, { figures: () => ({ written: t.model.written(0) }) });
    const sha = (x: Uint8Array): string => createHash('sha256').update(x).digest('hex');
    expect(a.pmis.length).toBeGreaterThan(0);
    expect([b.stream.length, sha(b.stream), b.ledger, t.model.truth(0)]).toEqual([a.stream.length, sha(a.stream), a.ledger, sim.truth(0)]);
  });

  test('disposing the routing target disposes the model and leaves the machine running', async () => {
    const { sim, rec } = await machine();
    const t = await attachOwnModel(rec, { profile: 'skylake' });
    await t[Symbol.asyncDispose]();
    await expect(t.model.cpuid(0, 0)).rejects.toMatchObject({ code: 'bad_state' });
    await expect(sim.cpuid(0, 0)).resolves.toBeDefined();
  });
});
