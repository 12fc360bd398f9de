// `ptlab seq --target qemu` (default --pt model): ONE TCG guest whose PT unit is the reference model
// over guest RAM (harness/hybrid) runs a sequence of the library — the driver's trace, its PMI
// handler's grow and chain branches, collection and `flow: truth` — and passes as on the sim,
// writing the same trace byte for byte (the buffers are the guest module's; the model is the sim's).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { seqCommand } from '../../harness/cli/commands/seq.js';
import type { ResultJson } from '../../harness/rundir/result.js';
import { loadSequences, runSequenceToDir } from '../../harness/seq/run-seq.js';
import { qemuTestEnv } from '../qemu/env.js';
import { tmpRoot } from '../scenarios/tmp.js';

const env = await qemuTestEnv();
const root = await tmpRoot('ptlab-seq-qemu-');
const FILE = 'sequences/pmi-handler-grow.yaml';

describe.skipIf(env.skip)(`ptlab seq --target qemu --pt model${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  test(`${FILE} passes on a TCG guest with the model as its PT unit, and writes the sim's trace`, async () => {
    const out = join(root, 'qemu'), err: string[] = [], lines: string[] = [];
    const code = await seqCommand([FILE, '--target', 'qemu', '--accel', 'tcg', '--out', out], { out: (s) => lines.push(s), err: (s) => err.push(s) });
    expect(code, [...err, ...lines].join('\n')).toBe(0);
    expect(err.join('\n')).toMatch(/ptlab seq: qemu:tcg\+model is ready/);
    expect(lines[0]).toMatch(/^PASS {2}sequences\/pmi-handler-grow\.yaml on qemu:tcg\+model:skylake: (\d+)\/\1 expectations/);

    const dir = join(out, 'pmi-handler-grow');
    const q = JSON.parse(await readFile(join(dir, 'result.json'), 'utf8')) as ResultJson;
    expect({ target: q.target, profile: q.profile, verdict: q.verdict }).toEqual({ target: 'qemu', profile: 'skylake', verdict: 'pass' });
    expect(q.figures.targetDescription).toMatch(/^qemu:tcg\+model:skylake$/);
    expect(q.expectations.find((e) => e.name.endsWith('handle-pmi handled chain'))?.ok).toBe(true);
    expect(q.expectations.find((e) => e.name.endsWith('collect flow = truth'))).toMatchObject({ ok: true, detail: expect.stringMatching(/lines identical/) });

    const [seq] = await loadSequences([FILE]);
    const simDir = join(root, 'sim');
    const s = await runSequenceToDir(seq!, simDir);
    expect(q.expectations.map((e) => [e.name, e.ok])).toEqual(s.expectations.map((e) => [e.name, e.ok]));
    expect((await readFile(join(dir, 'trace.pt'))).equals(await readFile(join(simDir, 'trace.pt')))).toBe(true);
  }, 240_000);

  test('--allow-msr reaches the guest target itself: a WRMSR of IA32_TSC_AUX, outside the PT allowlist, is written and read back', async () => {
    const file = join(root, 'tsc-aux.yaml');
    await writeFile(file, [
      'name: tsc-aux', 'cpu: skylake', 'steps:',
      '  - wrmsr: 0xc0000103', '    value: 0x77',
      '  - rdmsr: 0xc0000103', '    expect: 0x77',
      '  - wrmsr: 0xc0000103', '    value: 0',
    ].join('\n'));
    const out = join(root, 'allow-msr'), err: string[] = [], lines: string[] = [];
    const code = await seqCommand([file, '--target', 'qemu', '--accel', 'tcg', '--allow-msr', '--out', out], { out: (s) => lines.push(s), err: (s) => err.push(s) });
    expect(code, [...err, ...lines].join('\n')).toBe(0);
    expect(lines[0]).toMatch(/^PASS {2}.*tsc-aux\.yaml on qemu:tcg\+model:skylake: (\d+)\/\1 expectations/);
  }, 240_000);
});
