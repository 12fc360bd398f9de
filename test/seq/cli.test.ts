// `ptlab seq` as a process (the built dist/harness/cli/ptlab.js): exit 0 when every expectation
// holds, 1 when one fails, 2 for a bad file or command line (and then nothing is written).
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { tmpRoot } from '../scenarios/tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const root = await tmpRoot('ptlab-seq-cli-');
const ptlab = (...args: string[]) => execa('node', [CLI, 'seq', ...args], { reject: false, timeout: 60_000 });

const FAILING = '# a failing sequence\nsteps:\n  - rdmsr: IA32_RTIT_CTL\n    expect: {TraceEn: 1}\n';
const BAD = 'steps:\n  - rdmsr: IA32_RTIT_STATUS\n    expect: {Stoped: 1}\n';

describe('ptlab seq', () => {
  test('exit 0: a passing sequence writes its run directory and junit.xml', async () => {
    const out = join(root, 'pass');
    const r = await ptlab('sequences/enable-disable.yaml', '--out', out);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^PASS  sequences\/enable-disable\.yaml on sim:skylake: (\d+)\/\1 expectations/);
    for (const f of ['result.json', 'transcript.jsonl', 'trace.pt']) expect(existsSync(join(out, 'enable-disable', f)), f).toBe(true);
    expect(readFileSync(join(out, 'junit.xml'), 'utf8')).toMatch(/<testsuite name="seq:enable-disable@sim:skylake" tests="\d+" failures="0"/);
  });

  test('exit 1: a failed expectation, named by file:line', async () => {
    const f = join(root, 'failing.yaml');
    await writeFile(f, FAILING);
    const out = join(root, 'fail');
    const r = await ptlab(f, '--out', out, '--cpu', 'icelake');
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toContain(`FAIL ${f}:3 rdmsr IA32_RTIT_CTL TraceEn=1: expected TraceEn=1; read TraceEn=0`);
    const result = JSON.parse(readFileSync(join(out, 'failing', 'result.json'), 'utf8')) as { verdict: string; profile: string };
    expect(result).toMatchObject({ verdict: 'fail', profile: 'icelake' });
    // junit.xml is the suite's format: the JUnit XSD accepts it, failure included.
    const x = await execa('xmllint', ['--noout', '--schema', join(process.cwd(), 'docs', 'schemas', 'junit.xsd'), join(out, 'junit.xml')], { reject: false });
    expect(x.exitCode, x.stderr).toBe(0);
    expect(readFileSync(join(out, 'junit.xml'), 'utf8')).toContain('failures="1"');
  });

  test('--force replaces an earlier run; without it a non-empty --out is refused (exit 2)', async () => {
    const out = join(root, 'pass');
    expect((await ptlab('sequences/enable-disable.yaml', '--out', out)).exitCode).toBe(2);
    expect((await ptlab('sequences/enable-disable.yaml', '--out', out, '--force')).exitCode).toBe(0);
  });

  test('exit 2: a bad file is refused with file:line:col and a suggestion, before anything runs', async () => {
    const f = join(root, 'bad.yaml');
    await writeFile(f, BAD);
    const out = join(root, 'bad');
    // The good file first: nothing of it runs either.
    const r = await ptlab('sequences/enable-disable.yaml', f, '--out', out);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(`${f}:3:14: IA32_RTIT_STATUS has no field 'Stoped' (fields: FilterEn, ContextEn, TriggerEn, Error, Stopped, PendPSB, PendTopaPMI, PacketByteCnt) (did you mean IA32_RTIT_STATUS.Stopped?)`);
    expect(existsSync(out)).toBe(false);
  });

  test('exit 2: usage mistakes, a missing file, and the targets not in this slice', async () => {
    for (const args of [[], ['--bogus', 'x.yaml'], ['--cpu', 'pentium', 'sequences/enable-disable.yaml'], [join(root, 'missing.yaml')], ['--target', 'qemu', 'sequences/enable-disable.yaml'], ['--target', 'ssh', '--host', 'lab1', 'sequences/enable-disable.yaml']]) {
      const r = await ptlab(...args, '--out', join(root, 'never'));
      expect(r.exitCode, args.join(' ')).toBe(2);
    }
    const q = await ptlab('--target', 'qemu', 'sequences/enable-disable.yaml');
    expect(q.stderr).toMatch(/--target qemu is not in this slice of ptlab seq/);
    expect(existsSync(join(root, 'never'))).toBe(false);
  });

  test('--help exits 0 and the command is listed in ptlab --help', async () => {
    expect((await ptlab('--help')).stdout).toMatch(/^usage: ptlab seq FILE…/);
    expect((await execa('node', [CLI, '--help'])).stdout).toMatch(/ptlab seq FILE…/);
  });
});
