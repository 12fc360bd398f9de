// The run loop (driver/session.ts) against Execution.events: a test target whose start() feeds
// the model's output engine and yields the PMIs it raises, slices and the exit — the model
// advances only when the driver pulls the next event (docs/design.md "How the model runs").
import { describe, expect, test } from 'vitest';
import { PtError } from '../../driver/base/errors.js';
import { imbalance } from '../../driver/collect/ledger.js';
import type { TraceRequest } from '../../driver/request.js';
import { traceRun } from '../../driver/session.js';
import type { CallOpts, Execution, MsrOp, StartOpts, Target, TargetEvent, Workload } from '../../driver/target.js';
import { RecordingTarget } from '../../harness/rundir/recording-target.js';
import { pattern, rig, type Rig } from './rig.js';

/** The SimTarget with a start() that writes `bytes` in `chunk` steps (the transport edge, faked by a real class). */
class FeedTarget implements Target {
  constructor(private readonly r: Rig, private readonly bytes: number, private readonly chunk = 512) {}
  get description() { return this.r.sim.description; }
  get phys() { return this.r.sim.phys; }
  cpuid(l: number, s: number, c?: number, o?: CallOpts) { return this.r.sim.cpuid(l, s, c, o); }
  rdmsr(c: number, m: number, o?: CallOpts) { return this.r.sim.rdmsr(c, m, o); }
  wrmsr(c: number, m: number, v: bigint, o?: CallOpts) { return this.r.sim.wrmsr(c, m, v, o); }
  msrBatch(c: number, ops: readonly MsrOp[], o?: CallOpts) { return this.r.sim.msrBatch(c, ops, o); }
  pmiEnable(c: number, o?: CallOpts) { return this.r.sim.pmiEnable(c, o); }
  xsaves(c: number, rfbm: bigint, o?: CallOpts) { return this.r.sim.xsaves(c, rfbm, o); }
  xrstors(c: number, a: Uint8Array, rfbm: bigint, o?: CallOpts) { return this.r.sim.xrstors(c, a, rfbm, o); }
  start(_w: Workload, cpu: number, opts?: StartOpts): Execution {
    const { r, bytes, chunk } = this;
    const every = opts?.sliceBranches;
    async function* events(): AsyncGenerator<TargetEvent> {
      for (let done = 0, n = 0; done < bytes; done += chunk, n++) {
        const b = pattern(Math.min(chunk, bytes - done), r.fed.length);
        const before = r.out.written;
        await r.out.writeBytes(b);
        r.fed.push(...b.subarray(0, r.out.written - before));
        while (r.pending.length) yield r.pending.shift()!;
        if (every && n % 4 === 3) yield { kind: 'slice', cpu, branches: every };
      }
      yield { kind: 'exit', cpu, code: 0 };
    }
    return {
      events: events(),
      placed: async () => { if (!opts?.held) throw new PtError('bad_state', 'not held'); return {}; },
      go: async () => { if (!opts?.held) throw new PtError('bad_state', 'not held'); },
      [Symbol.asyncDispose]: async () => {},
    };
  }
  async [Symbol.asyncDispose]() { await this.r.sim[Symbol.asyncDispose](); }
}

const workload: Workload = { name: 'feed', image: new Uint8Array(1), base: 0x1000_0000n, entry: 0x1000_0000n };

async function run(req: TraceRequest, bytes: number, o: { sliceBranches?: number; profile?: 'skylake' | 'full' } = {}) {
  const r = await rig(o.profile ?? 'skylake');
  const t = new RecordingTarget(new FeedTarget(r, bytes), () => 0);
  const res = await traceRun(t, workload, req, { ...(o.sliceBranches ? { sliceBranches: o.sliceBranches } : {}), figures: () => ({ written: r.out.written }) });
  return { r, t, res };
}

const grow: TraceRequest = { output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 } };

describe('traceRun', () => {
  test('a ToPA run collects exactly what was written and balances', async () => {
    const { r, res } = await run(grow, 30_000);
    expect([Buffer.from(res.stream).equals(Buffer.from(r.fed)), res.ledger.lost, imbalance(res.ledger)]).toEqual([true, [], 0]);
  });
  test('every PMI of the run is handled and recorded', async () => {
    const { r, res } = await run(grow, 30_000);
    expect([res.pmis.length, res.pmis.every((p) => p.action === 'handled')]).toEqual([r.sim.unit(0).deliveredPmis, true]);
  });
  test('the exit code is reported and tracing is off at the end', async () => {
    const { r, res } = await run(grow, 10_000);
    expect([res.exitCode, r.sim.unit(0).traceEn]).toEqual([0, false]);
  });
  test('the transcript shows probe, fail-safe read, enable, the run, the disable and the execution\'s end in order', async () => {
    const { t } = await run(grow, 10_000);
    const o = t.lines.filter((l) => l.op !== 'alloc' && l.op !== 'free').map((l) => `${l.op}${l.msr ? ` ${l.msr}` : ''}`);
    const firstMsr = o.findIndex((x) => !x.startsWith('cpuid'));
    expect([o[firstMsr], o.indexOf('start') > firstMsr, o.slice(o.indexOf('exit') + 1)])
      .toEqual(['rdmsr 0x570', true, ['wrmsr 0x570', 'rdmsr 0x570', 'rdmsr 0x571', 'rdmsr 0x560', 'rdmsr 0x561', 'rdmsr 0x38e', 'end']]);
  });
  test('slices switch the context with XSAVES and lose nothing', async () => {
    const { r, res } = await run({ ...grow, switching: 'xsaves' }, 30_000, { sliceBranches: 100 });
    expect([res.switches > 0, Buffer.from(res.stream).equals(Buffer.from(r.fed)), res.ledger.lost]).toEqual([true, true, []]);
  });
  test('with PMI preservation and XSAVES switching the run is still lossless', async () => {
    const { r, res } = await run({ ...grow, switching: 'xsaves', InjectPsbPmiOnEnable: true }, 30_000, { sliceBranches: 100, profile: 'full' });
    expect([Buffer.from(res.stream).equals(Buffer.from(r.fed)), res.ledger.lost, r.sim.unit(0).status & (1n << 7n)]).toEqual([true, [], 0n]);
  });
  test('regions and tables are freed after the run', async () => {
    const { r } = await run(grow, 30_000);
    expect(r.sim.phys.allocatedBytes).toBe(0);
  });
});
