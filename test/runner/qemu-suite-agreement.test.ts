// The whole suite on `qemu --pt model` against the sim, as a user runs it: `ptlab run --all` on
// both at one seed, then `ptlab diff --suite` of the two must say equal (every verdict, trace,
// loss ledger and transcript by buffer role). The seed changes from one test run to the next and
// is printed, so CI sweeps seeds over time; PTLAB_AGREEMENT_SEED=N repeats one. A resource leak in
// the guest module (buffers, armed CPUs) shows only over a whole suite, never in one run.
import { execa } from 'execa';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { qemuTestEnv } from '../qemu/env.js';
import { tmpRoot } from '../scenarios/tmp.js';

const PTLAB = resolve('bin/ptlab.js');
const env = await qemuTestEnv();
const root = await tmpRoot('ptlab-suite-agree-');

/** This test run's seed: PTLAB_AGREEMENT_SEED, or one drawn from the clock. */
function agreementSeed(): number {
  const given = process.env['PTLAB_AGREEMENT_SEED'];
  if (given !== undefined) return Number(given);
  return 1 + (Math.floor(Date.now() / 1000) % 1_000_000);
}

describe.skipIf(env.skip)(`the whole suite on qemu --pt model equals the sim's${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  test('ptlab run --all on both at one seed: the same verdicts, and ptlab diff --suite says equal', async () => {
    const seed = agreementSeed();
    console.log(`qemu-suite-agreement: seed ${seed} (repeat with PTLAB_AGREEMENT_SEED=${seed})`);
    const sim = join(root, 'sim'), qemu = join(root, 'qemu');
    const run = (...args: string[]) => execa('node', [PTLAB, 'run', '--all', '--seed', String(seed), ...args], { reject: false });
    const [s, q] = [await run('--out', sim), await run('--target', 'qemu', '--pt', 'model', '--accel', 'tcg', '--out', qemu)];
    const summary = (r: { stdout: string }) => r.stdout.split('\n').find((l) => / runs: /.test(l));
    expect([s.exitCode, q.exitCode], `seed ${seed}: ${q.stderr.slice(-2000)}`).toEqual([0, 0]);
    expect(summary(q)).toBe(summary(s));
    const d = await execa('node', [PTLAB, 'diff', '--suite', sim, qemu], { reject: false });
    expect([d.exitCode, d.stdout.split('\n')[0]], `seed ${seed}: ${d.stdout.slice(0, 4000)}`).toEqual([0, `ptlab diff --suite ${sim} ${qemu}: equal`]);
  }, 900_000);
});
