// `ptlab run --target qemu --pt model --jobs 2`: two TCG guests at once, one per lane, each with the
// model as its PT unit; the suite is the one a single guest writes (verdicts and trace.pt equal to
// the sim's), and both VMs are gone when it ends.
import { execa } from 'execa';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { qemuTestEnv } from '../qemu/env.js';
import { tmpRoot } from '../scenarios/tmp.js';

const env = await qemuTestEnv();
const root = await tmpRoot('ptlab-qemu-jobs-');
const PTLAB = resolve(import.meta.dirname, '../../dist/harness/cli/ptlab.js');
const SCENARIOS = ['topa-grow', 'err-reserved-bit', 'topa-stop', 'xsaves-roundtrip'];

const qemuChildren = async (pid: number): Promise<number[]> =>
  (await execa('ps', ['-o', 'pid=,comm=', '--ppid', String(pid)], { reject: false })).stdout.split('\n')
    .filter((l) => l.includes('qemu')).map((l) => Number.parseInt(l.trim(), 10));

describe.skipIf(env.skip)(`--jobs 2 on qemu --pt model${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  test('two guests run the cells; the runs equal the sim\'s; no QEMU is left', async () => {
    const out = join(root, 'qemu'), sim = join(root, 'sim');
    const child = execa('node', [PTLAB, 'run', ...SCENARIOS, '--cpu', 'skylake', '--target', 'qemu', '--pt', 'model', '--accel', 'tcg', '--jobs', '2', '--out', out], { reject: false, timeout: 240_000 });
    const seen = new Set<number>();
    let most = 0;
    const poll = setInterval(() => {
      void qemuChildren(child.pid!).then((pids) => { pids.forEach((p) => seen.add(p)); most = Math.max(most, pids.length); });
    }, 200);
    const r = await child.finally(() => clearInterval(poll));
    expect(r.exitCode, r.stderr).toBe(0);
    expect(most).toBe(2);
    const alive = [...seen].filter((pid) => { try { process.kill(pid, 0); return true; } catch { return false; } });
    expect(alive).toEqual([]);
    expect((await execa('node', [PTLAB, 'run', ...SCENARIOS, '--cpu', 'skylake', '--out', sim], { reject: false })).exitCode).toBe(0);
    for (const s of SCENARIOS) {
      const [a, b] = await Promise.all([readFile(join(sim, s, 'skylake', 'trace.pt')), readFile(join(out, s, 'skylake', 'trace.pt'))]);
      expect(b.equals(a), s).toBe(true);
      const verdict = async (d: string) => (JSON.parse(await readFile(join(d, s, 'skylake', 'result.json'), 'utf8')) as { verdict: string }).verdict;
      expect(await verdict(out)).toBe(await verdict(sim));
    }
  }, 300_000);
});
