// A target that dies or hangs mid-suite, with `ptlab run --target qemu --pt model`
// spawned from dist/ as a lab runs it: QEMU killed, or stopped so that the guest no longer answers.
// The runs left are reported once each as errors (not failures) with the reason, the summary and
// junit.xml are written and marked incomplete, the exit status is 4 ("incomplete"), and nothing
// is left behind: no QEMU, no guest-RAM file, no socket directory.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { describe, expect, test } from 'vitest';
import { alive } from '../../harness/qemu/leftovers.js';
import { qemuTestEnv } from '../qemu/env.js';
import { tmpRoot } from '../scenarios/tmp.js';

const env = await qemuTestEnv();
const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const built = existsSync(CLI);
const root = await tmpRoot('ptlab-target-death-');

/** Starts the suite on one profile and resolves with QEMU's pid once the first run is done. */
async function suiteWithQemu(out: string, ...extra: string[]): Promise<{ child: ResultPromise; qemu: number | undefined }> {
  const child = execa('node', [CLI, 'run', '--all', '--target', 'qemu', '--pt', 'model', '--accel', 'tcg', '--cpu', 'skylake', '--out', out, ...extra],
    { reject: false, timeout: 170_000 });
  const qemu = await new Promise<number | undefined>((resolve) => {
    void child.finally(() => resolve(undefined));
    child.stderr!.on('data', (d: Buffer) => {
      if (!/^\[\s*1\//m.test(d.toString())) return;
      void execa('ps', ['-o', 'pid=,comm=', '--ppid', String(child.pid)], { reject: false })
        .then((p) => resolve(p.stdout.split('\n').filter((l) => l.includes('qemu')).map((l) => Number.parseInt(l.trim(), 10))[0]));
    });
  });
  return { child, qemu };
}

/** What a controller `pid` may leave: guest-RAM files and socket directories named after it. */
async function leftoversOf(pid: number): Promise<string[]> {
  const shm = (await readdir('/dev/shm').catch(() => [] as string[])).filter((n) => n.startsWith(`ptlab-${pid}-`));
  const tmp = (await readdir(tmpdir())).filter((n) => n.startsWith(`ptlab-qemu-${pid}-`));
  return [...shm, ...tmp];
}

describe.skipIf(env.skip || !built)(`a dying or hung qemu target${env.skip ? ` (skipped: ${env.reason})` : built ? '' : ' (skipped: run `npm run build` first)'}`, () => {
  test('QEMU killed mid-suite: the runs left are errors with the reason, exit 4, junit errors, nothing left behind', async () => {
    const out = join(root, 'killed');
    const { child, qemu } = await suiteWithQemu(out);
    expect(qemu, 'QEMU runs under ptlab').toBeDefined();
    process.kill(qemu!, 'SIGKILL');
    const r = await child;
    const stderr = String(r.stderr), stdout = String(r.stdout);
    const junit = await readFile(join(out, 'junit.xml'), 'utf8');
    const errors = Number(/<testsuites [^>]*errors="(\d+)"/.exec(junit)?.[1]);
    expect({
      code: r.exitCode,
      incomplete: /INCOMPLETE: the target died during .*QEMU exited \(killed by SIGKILL\)/.test(stderr),
      notRun: (junit.match(/not run: the target died/g) ?? []).length > 10,
      junitErrors: errors > 10,
      failures: /<testsuites [^>]*failures="0"/.test(junit),
      summary: /\d+ errors \(not judged\)/.test(stdout),
      qemuAlive: alive(qemu!),
      leftovers: await leftoversOf(child.pid!),
    }).toEqual({ code: 4, incomplete: true, notRun: true, junitErrors: true, failures: true, summary: true, qemuAlive: false, leftovers: [] });
  }, 180_000);

  test('a hung guest is detected within one run\'s budget and named "not responding": exit 4, QEMU stopped', async () => {
    const out = join(root, 'hung');
    const { child, qemu } = await suiteWithQemu(out);
    expect(qemu, 'QEMU runs under ptlab').toBeDefined();
    process.kill(qemu!, 'SIGSTOP');
    const stoppedAt = performance.now();
    const r = await child;
    const seconds = (performance.now() - stoppedAt) / 1000;
    const stderr = String(r.stderr);
    const junit = await readFile(join(out, 'junit.xml'), 'utf8');
    expect({
      code: r.exitCode,
      incomplete: /INCOMPLETE: the target died during .*QEMU is not responding/.test(stderr),
      notRun: /not run: the target died during .*QEMU is not responding/.test(junit),
      // One helper request's timeout (10 s), the QMP probe (3 s) and the kill, with room for a
      // loaded host: the default --max-target-failures 3 no longer waits for three runs to fail.
      withinOneRun: seconds < 60,
      qemuAlive: alive(qemu!),
      leftovers: await leftoversOf(child.pid!),
    }).toEqual({ code: 4, incomplete: true, notRun: true, withinOneRun: true, qemuAlive: false, leftovers: [] });
  }, 180_000);

  test('a hung guest and a second SIGINT: the suite stops as interrupted (exit 130), never as ptlab\'s own failure', async () => {
    const out = join(root, 'hung-stopped');
    const { child, qemu } = await suiteWithQemu(out);
    expect(qemu, 'QEMU runs under ptlab').toBeDefined();
    process.kill(qemu!, 'SIGSTOP');
    await new Promise((r) => setTimeout(r, 1500)); // a run is waiting on the hung guest now
    child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 500));
    child.kill('SIGINT');
    const r = await child;
    const stderr = String(r.stderr);
    const junit = await readFile(join(out, 'junit.xml'), 'utf8');
    expect({
      code: r.exitCode,
      internal: /internal error|ptlab itself failed/.test(stderr + junit),
      incomplete: /ptlab\.incomplete[\s\S]*interrupted/.test(junit),
      qemuAlive: alive(qemu!),
      leftovers: await leftoversOf(child.pid!),
    }).toEqual({ code: 130, internal: false, incomplete: true, qemuAlive: false, leftovers: [] });
  }, 180_000);

  test('Ctrl-C during boot: exit 130, junit.xml and the summary say interrupted before any run, nothing left behind', async () => {
    const out = join(root, 'boot');
    const child = execa('node', [CLI, 'run', '--all', '--target', 'qemu', '--pt', 'model', '--accel', 'tcg', '--cpu', 'skylake', '--out', out],
      { reject: false, timeout: 120_000 });
    // QEMU is up as a child of ptlab, and the guest still boots: interrupt now.
    let qemu: number | undefined;
    for (let i = 0; i < 200 && qemu === undefined && child.exitCode === null; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const p = await execa('ps', ['-o', 'pid=,comm=', '--ppid', String(child.pid)], { reject: false });
      qemu = p.stdout.split('\n').filter((l) => l.includes('qemu')).map((l) => Number.parseInt(l.trim(), 10))[0];
    }
    child.kill('SIGINT');
    const r = await child;
    const junit = await readFile(join(out, 'junit.xml'), 'utf8').catch(() => '');
    expect({
      qemuSeen: qemu !== undefined,
      code: r.exitCode,
      junit: /ptlab\.incomplete[\s\S]*interrupted while opening the target, before any run/.test(junit),
      summary: /^0 runs\nINCOMPLETE: interrupted while opening the target/m.test(String(r.stdout)),
      qemuAlive: qemu !== undefined && alive(qemu),
      leftovers: await leftoversOf(child.pid!),
    }).toEqual({ qemuSeen: true, code: 130, junit: true, summary: true, qemuAlive: false, leftovers: [] });
  }, 150_000);
});
