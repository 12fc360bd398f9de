// Runs a workload image natively (ring 3, untraced) and times it: the real
// CPU's speed on the same code the model executes (`npm run bench`, sim section).
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Workload } from '../../driver/target.js';
import { buildCTool } from '../native/c-tool.js';
import { repoRoot } from './libipt-tools.js';

const run = promisify(execFile);

/** Best wall time of `runs` native runs of `w` (fork + mmap + the workload), in seconds. */
export async function runImageNatively(w: Workload, runs = 5): Promise<number> {
  const root = repoRoot();
  const exe = await buildCTool({
    sources: [join(root, 'harness', 'bench', 'native', 'runimage.c')],
    exe: join(root, 'build', 'native', 'runimage'),
  });
  const img = join(root, 'build', 'native', `bench-${process.pid}.bin`);
  writeFileSync(img, w.image);
  try {
    const { stdout } = await run(exe, [img, w.base.toString(16), w.entry.toString(16), String(runs)]);
    return (JSON.parse(stdout) as { best_seconds: number }).best_seconds;
  } finally {
    rmSync(img, { force: true });
  }
}
