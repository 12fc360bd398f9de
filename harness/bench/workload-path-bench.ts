// Benchmark of the path generator (for `npm run bench`; never asserted in tests).
import { generateWorkload } from '../sim/workload/generate.js';

/** Result of `benchWorkloadPath`. */
export interface WorkloadPathBench {
  readonly branchesPerSecond: number;
  readonly branches: number;
  readonly seconds: number;
}

/** Runs the PathCursor over a ~1e6-branch workload a few times and reports the best rate. */
export function benchWorkloadPath(opts: { seed?: number; branches?: number; reps?: number } = {}): WorkloadPathBench {
  const w = generateWorkload(opts.seed ?? 1, { branches: opts.branches ?? 1_000_000 });
  let best = Infinity;
  let n = 0;
  let sink = 0;
  for (let rep = 0; rep < (opts.reps ?? 5); rep++) {
    const c = w.model.cursor();
    const t0 = performance.now();
    while (c.next()) sink ^= c.to | 0;
    const t = (performance.now() - t0) / 1000;
    n = c.index + 1;
    if (t < best) best = t;
  }
  if (sink === 0.5) throw new Error('unreachable'); // keeps the loop observable
  return { branchesPerSecond: n / best, branches: n, seconds: best };
}
