// The CLI spawned as a user runs it: `node dist/harness/cli/ptlab.js …`
// (`npm test` builds dist/ first). Exit status and output.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { tmpRoot } from '../scenarios/tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const built = existsSync(CLI) && existsSync(join(process.cwd(), 'dist', 'harness', 'cli', 'commands', 'run.js'));
const root = await tmpRoot('ptlab-spawn-');

const ptlab = (...args: string[]) => execa('node', [CLI, ...args], { reject: false, timeout: 60_000 });

describe.skipIf(!built)('ptlab spawned from dist/ (run `npm run build` first)', () => {
  test('list prints every scenario and exits 0', async () => {
    const r = await ptlab('list');
    expect([r.exitCode, r.stdout.includes('topa-grow'), r.stdout.includes('kvm-guest-limits')]).toEqual([0, true, true]);
  });

  test('run of one scenario on one profile exits 0 and prints the summary', async () => {
    const r = await ptlab('run', 'topa-chain', '--cpu', 'skylake', '--out', join(root, 'ok'));
    expect([r.exitCode, r.stdout.includes('1 runs: 1 passed, 0 failed, 0 skipped')]).toEqual([0, true]);
  });

  test('run with a negative-control knob exits 1', async () => {
    const r = await ptlab('run', 'err-reserved-bit', '--cpu', 'skylake', '--knob', 'swallow-gp', '--out', join(root, 'knob'));
    expect(r.exitCode).toBe(1);
  });

  test('run of an unknown scenario exits 2 with the error on stderr and writes nothing', async () => {
    const out = join(root, 'bad');
    const r = await ptlab('run', 'nope', '--out', out);
    expect([r.exitCode, r.stderr.includes("unknown scenario 'nope'"), existsSync(out)]).toEqual([2, true, false]);
  });
});
