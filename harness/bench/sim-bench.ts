// Benchmark of the whole model (for `npm run bench`; never asserted in tests): a generated
// workload run through SimTarget.start with truth recording off, single-range output into a
// 4 MiB ring, the way the driver would set it up. Workload generation is not timed.
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { SimTarget } from '../sim/sim-target.js';
import { generateWorkload } from '../sim/workload/generate.js';

/** Result of `benchSim`. */
export interface SimBench {
  readonly branchesPerSecond: number;
  readonly bytesPerSecond: number;
  readonly branches: number;
  readonly seconds: number;
}

const RING = 4 * 2 ** 20;

/** Runs a ~`branches`-branch workload `reps` times on the model; reports the best rate. */
export async function benchSim(opts: { seed?: number; branches?: number; reps?: number; sliceBranches?: number } = {}): Promise<SimBench> {
  const w = generateWorkload(opts.seed ?? 1, { branches: opts.branches ?? 2_000_000 });
  const n = w.model.branchCount; // records the path once, outside the timed part
  let best = Infinity;
  let bytes = 0;
  for (let rep = 0; rep < (opts.reps ?? 3); rep++) {
    await using t = await SimTarget.create({ profile: 'skylake', memory: { ramSize: 64 * 2 ** 20 } });
    const region = await t.phys.alloc(RING, RING);
    await t.msrBatch(0, [
      { op: 'wrmsr', msr: 0x571, value: 0n },
      { op: 'wrmsr', msr: 0x560, value: region.base },
      { op: 'wrmsr', msr: 0x561, value: BigInt(RING - 1) },
      { op: 'wrmsr', msr: 0x570, value: IA32_RTIT_CTL.encode({ TraceEn: true, User: true, BranchEn: true, PSBFreq: 3 }) },
    ]);
    const t0 = performance.now();
    await using ex = t.start(w, 0, opts.sliceBranches ? { sliceBranches: opts.sliceBranches } : {});
    for await (const _e of ex.events) { /* no driver work: measure the model */ }
    const s = (performance.now() - t0) / 1000;
    if (s < best) { best = s; bytes = t.written(0); }
  }
  return { branchesPerSecond: n / best, bytesPerSecond: bytes / best, branches: n, seconds: best };
}
