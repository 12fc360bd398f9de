// `ptlab seq` as a process (the built dist/harness/cli/ptlab.js): exit 0 when every expectation
// holds, 1 when one fails, 2 for a bad file or command line (and then nothing is written).
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { tmpRoot } from '../scenarios/tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const root = await tmpRoot('ptlab-seq-cli-');
const ptlab = (...args: string[]) => execa('node', [CLI, 'seq', ...args], { reject: false, timeout: 60_000 });

/** A local TCP port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((res) => srv.listen(0, '127.0.0.1', res));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((res) => srv.close(() => res()));
  return port;
}

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

  test('its output is a suite ptlab report reads whole: results.jsonl beside junit.xml, no problem listed', async () => {
    const out = join(root, 'reported');
    expect((await ptlab('sequences/enable-disable.yaml', '--out', out)).exitCode).toBe(0);
    const r = await execa('node', [CLI, 'report', out, '--out', join(root, 'reported.html')], { reject: false });
    const html = readFileSync(join(root, 'reported.html'), 'utf8');
    expect([r.exitCode, existsSync(join(out, 'results.jsonl')), /class="problems"/.test(html), /1 runs: <span class="badge v-pass">1 pass/.test(html)])
      .toEqual([0, true, false, true]);
  });

  test('exit 2: every mistake of a file at once, each at its place and saying what belongs there', async () => {
    const f = join(root, 'three-mistakes.yaml');
    await writeFile(f, 'steps:\n  - wrmsr: IA32_RTIT_CTL\n  - alloc: x\n    sise: 4096\n  - rdmsr: 0x999999999\n');
    const empty = join(root, 'empty.yaml');
    await writeFile(empty, '');
    const [r, e] = [await ptlab(f, '--out', join(root, 'never3')), await ptlab(empty, '--out', join(root, 'never4'))];
    expect([r.exitCode, r.stderr.split('\n'), e.exitCode, e.stderr]).toEqual([2, [
      `${f}:2:5: must be given exactly one of value and fields`,
      `${f}:4:5: unknown key 'sise' (keys here: alloc, size, align) (did you mean size?)`,
      `${f}:5:12: 'rdmsr' must be an MSR: its SDM name (IA32_RTIT_CTL) or its number, 0 to 0xFFFFFFFF`,
    ], 2, `${empty}:1:1: is not a mapping: the file holds nothing, or no keys (a sequence is name, cpu and steps: docs/formats/seq.md)`]);
  });

  test('exit 2: the names and values of every step are checked too, all at once, a repeat\'s own steps included', async () => {
    const f = join(root, 'name-mistakes.yaml');
    await writeFile(f, [
      'steps:', '  - rdmsr: IA32_RTIT_CTLL', '  - wrmsr: IA32_RTIT_CTL', '    fields: { TraceEnn: 1 }', '  - repeat: 2', '    steps:',
      '      - rdmsr: IA32_RTIT_STATUSS', '      - topa: t0', '        entries:', '          - {buffer: nothere, stop: true}', '  - rdmsr: IA32_RTIT_CTL', '',
    ].join('\n'));
    const r = await ptlab(f, '--out', join(root, 'never5'));
    expect([r.exitCode, r.stderr.split('\n').map((l) => l.replace(/ \(.*$/, ''))]).toEqual([2, [
      `${f}:2:12: unknown MSR 'IA32_RTIT_CTLL'`,
      `${f}:4:15: IA32_RTIT_CTL has no field 'TraceEnn'`,
      `${f}:7:16: unknown MSR 'IA32_RTIT_STATUSS'`,
      `${f}:10:22: no buffer named 'nothere' is defined before this step`,
    ]]);
    expect(existsSync(join(root, 'never5'))).toBe(false);
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

  test('exit 2: usage mistakes, a missing file, and target options that do not apply', async () => {
    const seq = 'sequences/enable-disable.yaml';
    const cases: readonly (readonly [string[], RegExp])[] = [
      [[], /no sequence file given/],
      [['--bogus', seq], /--bogus/],
      [['--cpu', 'pentium', seq], /unknown CPU profile 'pentium'/],
      [[join(root, 'missing.yaml')], /missing\.yaml:1:1: cannot read the file: No such file or directory$/],
      [['sequences'], /^sequences:1:1: cannot read the file: Is a directory \(give its sequence files: sequences\/\*\.yaml\)$/],
      [['--target', 'ssh', seq], /--target ssh needs --host H/],
      [['--target', 'qemu', '--host', 'lab1', seq], /--host does not apply to --target qemu/],
      [['--allow-msr', seq], /--allow-msr does not apply to --target sim/],
      [['--target', 'ssh', '--host', 'lab1', '--cpu', 'skylake', seq], /--cpu chooses a model profile; --target ssh runs on the CPU's own PT/],
      [['--target', 'qemu', '--pt', 'hardware', '--cpu', 'skylake', seq], /--target qemu --pt hardware runs on the CPU's own PT/],
    ];
    for (const [args, why] of cases) {
      const r = await ptlab(...args, '--out', join(root, 'never'));
      expect([r.exitCode, r.stderr], args.join(' ')).toEqual([2, expect.stringMatching(why)]);
    }
    expect(existsSync(join(root, 'never'))).toBe(false);
  });

  test('exit 2 on a real CPU: a WRMSR outside the PT/perfmon allowlist is refused before connecting, naming the MSR and --allow-msr', async () => {
    const f = join(root, 'debugctl.yaml');
    await writeFile(f, 'steps:\n  - rdmsr: IA32_RTIT_CTL\n    expect: 0\n  - wrmsr: 0x1d9\n    value: 0\n');
    const r = await ptlab(f, '--target', 'ssh', '--host', 'lab1.invalid', '--out', join(root, 'never'));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(`${f}:4:12: WRMSR 0x1d9 writes a real MSR on ssh:lab1.invalid, and it is not a PT or performance-monitoring MSR (IA32_RTIT_*, IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET): give --allow-msr to write it`);
    expect(existsSync(join(root, 'never'))).toBe(false);
  });

  test('with --allow-msr the same file passes the check and ptlab goes on to the target: exit 3 when it cannot use it, nothing written', async () => {
    const f = join(root, 'debugctl.yaml');
    const host = join(root, 'host_ed25519');
    if (!existsSync(host)) await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', host]);
    const key = join(root, 'client_ed25519');
    if (!existsSync(key)) await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    const out = join(root, 'unusable');
    // A port nothing listens on: the connection is refused (and retried a few seconds), so the target cannot be used.
    const r = await ptlab(f, '--target', 'ssh', '--host', '127.0.0.1', '--port', String(await closedPort()), '--key', key, '--known-host', `${host}.pub`, '--allow-msr', '--out', out);
    expect([r.exitCode, r.stderr]).toEqual([3, expect.stringMatching(/^ptlab seq: cannot use the target: ssh:127\.0\.0\.1: .*Connection refused/)]);
    expect(existsSync(out)).toBe(false);
  });

  test('--help exits 0 and the command is listed in ptlab --help', async () => {
    expect((await ptlab('--help')).stdout).toMatch(/^usage: ptlab seq FILE…/);
    expect((await execa('node', [CLI, '--help'])).stdout).toMatch(/ptlab seq FILE…/);
  });
});
