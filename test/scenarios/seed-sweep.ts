// The CI seed sweep: `ptlab run --all --seeds A-B` spawned as a user runs it, on
// every model profile. Every scenario must hold on every seed; a failure shows the sweep's table
// (which scenario, which profile, which seeds) and keeps the failed runs' directories.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { expect, test } from 'vitest';
import { tmpRoot } from './tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');

/** Declares the test that sweeps seeds `from`..`to` over every scenario and profile. */
export function sweepTest(from: number, to: number): void {
  test(`ptlab run --all --seeds ${from}-${to}: no scenario fails on any seed or profile`, async () => {
    expect(existsSync(CLI), 'npm test builds dist/ first').toBe(true);
    const out = join(await tmpRoot('ptlab-sweep-'), 'sweep');
    const r = await execa('node', [CLI, 'run', '--all', '--seeds', `${from}-${to}`, '--out', out], { reject: false, timeout: 900_000 });
    const summary = r.stdout.slice(r.stdout.indexOf('failures'));
    // stderr has the progress: a bounded number of lines (docs/sharding.md "Progress"), and a line for every run that failed (none).
    const failed = r.stderr.split('\n').filter((l) => /\] (FAIL|ERROR) /.test(l));
    expect({ exitCode: r.exitCode, failed, summary }).toMatchObject({ exitCode: 0, failed: [] });
    expect(summary).toMatch(new RegExp(`runs over seeds ${from}-${to}: \\d+ passed, 0 failed, \\d+ skipped; 0 failures per 1,000 runs`));
  }, 900_000);
}
