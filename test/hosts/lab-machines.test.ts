// `ptlab run --hosts` on three TCG guests standing in for lab machines (dropbear, the module and
// ptlab-helper, as test/runner/ssh-run.test.ts boots them), each `pt: model`: no Intel PT, so the
// reference model is its PT unit while its helper link is driven over SSH (docs/hosts.md). The
// inventory also holds lab1 again as `pt: hardware` (refused after the probe: no PT under TCG)
// and a host where no SSH server answers. One guest is killed after its first run. The two others finish
// with their verdicts; the killed one's remaining cells are errors saying it died; the refused and
// the down host are errors for their own cells only; results are grouped per host; the top-level
// junit.xml is valid; exit 4; and nothing is left running, here or on the surviving machines.
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { alive } from '../../harness/qemu/leftovers.js';
import { QemuVm } from '../../harness/qemu/vm.js';
import { imageSshKeys, SshClient } from '../../harness/ssh/ssh-client.js';
import { qemuTestEnv } from '../qemu/env.js';
import { tmpRoot } from '../scenarios/tmp.js';
import { deadPort } from './dead-port.js';

const env = await qemuTestEnv();
const root = await tmpRoot('ptlab-hosts-vm-');
const SCENARIOS = ['topa-grow', 'tracestop', 'err-reserved-bit'];
const XSD = join(process.cwd(), 'docs', 'schemas', 'junit.xsd');
const DEAD = await deadPort();

/** ptlab in this process; `onErr` sees each stderr line as it is printed. */
async function ptlab(argv: string[], onErr: (l: string) => void = () => undefined): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [], err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => { err.push(s); onErr(s); } });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe.skipIf(env.skip)(`ptlab run --hosts on three stand-in lab machines${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  const vms: QemuVm[] = [];
  let keys: Awaited<ReturnType<typeof imageSshKeys>>;

  beforeAll(async () => {
    if (env.skip) return;
    const { kernel, initrd } = env.image;
    const launched = await Promise.allSettled([0, 1, 2].map(() =>
      QemuVm.launch({ accel: 'tcg', cpu: 'max', smp: 1, memoryMiB: 256, kernel, initrd }, { timeoutMs: 90_000 })));
    for (const l of launched) if (l.status === 'fulfilled') vms.push(l.value);
    const failed = launched.find((l): l is PromiseRejectedResult => l.status === 'rejected');
    if (failed) throw failed.reason;
    keys = await imageSshKeys(env.image.hostKeyPub, env.image.clientKey);
    // dropbear starts a moment after the guest agent that launch() waits for.
    await Promise.all(vms.map(async (vm) => (await SshClient.connectWhenReady({ host: '127.0.0.1', port: vm.sshPort!, username: 'root', ...keys }, { timeoutMs: 30_000 })).close()));
  }, 120_000);

  afterAll(async () => {
    // The killed guest's QEMU is gone already; its dispose reports how it died.
    for (const vm of vms) await vm.dispose().catch(() => undefined);
  });

  test('one machine killed after its first run: the others finish, its cells left are errors, exit 4, nothing left running', async () => {
    if (env.skip) return;
    // Keys beside the inventory, named relative to it.
    await mkdir(join(root, 'keys'));
    await copyFile(env.image.clientKey, join(root, 'keys', 'client'));
    await copyFile(env.image.hostKeyPub, join(root, 'keys', 'lab.pub'));
    const entry = (name: string, port: number, extra: string): string =>
      `  - name: ${name}\n    host: 127.0.0.1\n    port: ${port}\n    key: keys/client\n    known-host: keys/lab.pub\n${extra}`;
    const inventory = join(root, 'hosts.yaml');
    await writeFile(inventory, `hosts:\n${[
      ...vms.map((vm, i) => entry(`lab${i + 1}`, vm.sshPort!, '    pt: model\n    tags: [tcg]\n')),
      entry('lab1-hw', vms[0]!.sshPort!, '    tags: [tcg]\n'),
      entry('down', DEAD, '    connect-timeout: 2\n'),
    ].join('')}`);
    const out = join(root, 'out');
    const killed = vms[1]!;
    let killedAfter: string | undefined;
    const r = await ptlab(['run', ...SCENARIOS, '--cpu', 'skylake', '--hosts', inventory, '--out', out], (l) => {
      // Progress is printed as each run ends, before the host's next run starts.
      if (killedAfter === undefined && /^\[lab2\] \[1\//.test(l)) { killedAfter = l; process.kill(killed.pid!, 'SIGKILL'); }
    });
    expect(killedAfter, r.err).toBeDefined();

    const lines = (await readFile(join(out, 'results.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { host: string; scenario: string; profile: string; verdict: string; reason?: string });
    const of = (h: string) => lines.filter((l) => l.host === h);
    const verdicts = (h: string) => of(h).map((l) => l.verdict);
    expect({
      code: r.code,
      hosts: [...new Set(lines.map((l) => l.host))],
      grouped: lines.map((l) => l.host).join(' '),
      lab1: verdicts('lab1'), lab3: verdicts('lab3'), lab2: verdicts('lab2'),
      lab2Died: /^the target died: /.test(of('lab2')[1]?.reason ?? ''),
      lab2NotRun: /^not run: the target died during /.test(of('lab2')[2]?.reason ?? ''),
      hw: of('lab1-hw').map((l) => [l.profile, l.verdict, /does not enumerate Intel PT/.test(l.reason ?? '')]),
      down: of('down').map((l) => [l.verdict, /^not run: the host is unavailable: ssh:down: ssh: 127\.0\.0\.1:\d+: /.test(l.reason ?? '')]),
    }).toEqual({
      code: 4,
      hosts: ['lab1', 'lab2', 'lab3', 'lab1-hw', 'down'],
      grouped: ['lab1', 'lab2', 'lab3', 'lab1-hw', 'down'].flatMap((h) => [h, h, h]).join(' '),
      lab1: ['pass', 'pass', 'pass'], lab3: ['pass', 'pass', 'pass'], lab2: ['pass', 'error', 'error'],
      lab2Died: true, lab2NotRun: true,
      hw: SCENARIOS.map(() => ['probed', 'error', true]),
      down: SCENARIOS.map(() => ['error', true]),
    });

    // Each host is a suite directory of its own; the model wrote what the sim writes.
    const sim = await ptlab(['run', 'topa-grow', '--cpu', 'skylake', '--out', join(root, 'sim')]);
    const trace = (dir: string) => readFile(join(dir, 'topa-grow', 'skylake', 'trace.pt'));
    expect({
      sim: sim.code,
      sameTrace: Buffer.compare(await trace(join(out, 'lab1')), await trace(join(root, 'sim'))) === 0,
      files: ['lab1', 'lab2', 'lab3', 'lab1-hw', 'down'].map((h) => [h, existsSync(join(out, h, 'junit.xml')), existsSync(join(out, h, 'results.jsonl'))]),
      truth: existsSync(join(out, 'lab3', 'tracestop', 'skylake', 'truth.jsonl')),
      summary: /lab2 .*INCOMPLETE: the target died during/.test(r.out) && /lab1-hw .*UNAVAILABLE/.test(r.out) && /lab3 .* 3 +3 +0 +0 +0 +0 +complete/.test(r.out),
    }).toEqual({
      sim: 0, sameTrace: true, files: ['lab1', 'lab2', 'lab3', 'lab1-hw', 'down'].map((h) => [h, true, true]), truth: true, summary: true,
    });

    // The top junit.xml: valid, one testsuite per host, the killed host's errors in its own suite.
    const junit = await readFile(join(out, 'junit.xml'), 'utf8');
    const x = await execa('xmllint', ['--noout', '--schema', XSD, join(out, 'junit.xml')], { reject: false });
    const suite = (h: string) => new RegExp(`<testsuite name="${h}" tests="(\\d+)" failures="(\\d+)" errors="(\\d+)"`).exec(junit)?.slice(1).map(Number);
    expect({ valid: x.exitCode, lab1: suite('lab1'), lab2: suite('lab2'), lab3: suite('lab3'), died: junit.includes('name="lab2/tracestop@ssh:skylake"') })
      .toEqual({ valid: 0, lab1: [3, 0, 0], lab2: [4, 0, 3], lab3: [3, 0, 0], died: true });

    // Nothing left running: the killed QEMU is gone, this process has no child but the two live
    // guests, and neither guest still runs a ptlab-helper started over SSH (every session was
    // closed; the guest's own helper on its virtio-serial port is the image's and stays).
    const children = (await execa('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)])).stdout.split('\n')
      .map((l) => l.trim().split(/\s+/)).filter(([, comm]) => comm !== 'ps').map(([pid]) => Number(pid)).sort();
    const helpers = async (vm: QemuVm): Promise<string[]> => {
      await using ssh = await SshClient.connect({ host: '127.0.0.1', port: vm.sshPort!, username: 'root', ...keys });
      for (let i = 0; ; i++) {
        const left = Buffer.from((await ssh.exec('ps')).stdout).toString().split('\n').filter((l) => /ptlab-helper\s*$/.test(l));
        if (left.length === 0 || i === 20) return left;
        await new Promise((res) => setTimeout(res, 100));
      }
    };
    expect({ killedAlive: alive(killed.pid!), children, lab1: await helpers(vms[0]!), lab3: await helpers(vms[2]!) })
      .toEqual({ killedAlive: false, children: [vms[0]!.pid!, vms[2]!.pid!].sort(), lab1: [], lab3: [] });
  }, 120_000);

  test('--hosts with --jobs 2 on the two live machines: exit 0, and their traces equal the sim\'s', async () => {
    if (env.skip) return;
    const inventory = join(root, 'two.yaml');
    const entry = (name: string, port: number): string =>
      `  - name: ${name}\n    host: 127.0.0.1\n    port: ${port}\n    key: keys/client\n    known-host: keys/lab.pub\n    pt: model\n`;
    await writeFile(inventory, `hosts:\n${entry('lab1', vms[0]!.sshPort!)}${entry('lab3', vms[2]!.sshPort!)}`);
    const out = join(root, 'jobs'), sim = join(root, 'jobs-sim');
    const r = await ptlab(['run', ...SCENARIOS, '--cpu', 'skylake', '--hosts', inventory, '--jobs', '2', '--out', out]);
    expect(r.code, r.err).toBe(0);
    expect((await ptlab(['run', ...SCENARIOS, '--cpu', 'skylake', '--out', sim])).code).toBe(0);
    const same: boolean[] = [];
    for (const h of ['lab1', 'lab3']) {
      for (const sc of ['topa-grow', 'tracestop']) same.push((await readFile(join(out, h, sc, 'skylake', 'trace.pt'))).equals(await readFile(join(sim, sc, 'skylake', 'trace.pt'))));
    }
    expect(same).toEqual([true, true, true, true]);
  }, 120_000);
});
