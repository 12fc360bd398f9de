// `ptlab doctor --target ssh` against dropbear in a TCG guest, through the guest's ptlab-helper:
// every check printed with a verdict and exit 1 (no Intel PT under TCG), the module's state read,
// a machine without the module told how to load it, and an unreachable machine exit 3.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { QemuTarget } from '../../harness/qemu/qemu-target.js';
import { imageSshKeys, SshClient } from '../../harness/ssh/ssh-client.js';
import { ptlab } from '../cli/run-main.js';
import { qemuTestEnv } from '../qemu/env.js';

const env = await qemuTestEnv();

describe.skipIf(env.skip)(`ptlab doctor --target ssh to a TCG guest${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  let t: QemuTarget | undefined;
  let ssh: string[] = [];

  beforeAll(async () => {
    if (env.skip) return;
    t = await QemuTarget.launch({ accel: 'tcg', cpu: 'max', smp: 1, memoryMiB: 256, kernel: env.image.kernel, initrd: env.image.initrd }, { timeoutMs: 90_000 });
    const keys = await imageSshKeys(env.image.hostKeyPub, env.image.clientKey);
    await (await SshClient.connectWhenReady({ host: '127.0.0.1', port: t.vm.sshPort!, username: 'root', ...keys }, { timeoutMs: 30_000 })).close();
    ssh = ['--target', 'ssh', '--host', '127.0.0.1', '--port', String(t.vm.sshPort!), '--key', env.image.clientKey, '--known-host', env.image.hostKeyPub];
  });

  afterAll(async () => {
    await t?.dispose();
  });

  test('prints nine checks, each with a verdict, and exits 1: the TCG CPU has no Intel PT', async () => {
    const t0 = Date.now();
    const r = await ptlab('doctor', ...ssh);
    const checks = r.out.split('\n').filter((l) => /^\[(ok|warn|no|\?)\]/.test(l));
    expect({ code: r.code, checks: checks.length, ms: Date.now() - t0 < 20_000 }).toEqual({ code: 1, checks: 9, ms: true });
    expect(r.out).toMatch(/^\[ok\] {3}helper: ptlab-helper, module interface 2, exec off$/m);
    expect(r.out).toMatch(/^\[ok\] {3}module \(ptlab\.ko\): loaded, interface 2/m);
    expect(r.out).toMatch(/^\[no\] {3}Intel PT: AuthenticAMD, CPUID\.\(EAX=07H,ECX=0\):EBX\[25\] = 0: no Intel PT — /m);
    expect(r.out).toMatch(/^\[warn\] isolated CPUs: none/m);
    expect(r.out).toMatch(/not ready for PT runs/);
  });

  test('--json gives the checks and the facts the helper read', async () => {
    const r = await ptlab('doctor', ...ssh, '--json');
    const d = JSON.parse(r.out) as { machine: string; ready: boolean; checks: unknown[]; facts: { kernel: string; kstate: { abi: number } } };
    expect({ machine: d.machine, ready: d.ready, checks: d.checks.length, kernel: d.facts.kernel, abi: d.facts.kstate.abi })
      .toEqual({ machine: 'ssh:127.0.0.1', ready: false, checks: 9, kernel: env.skip ? '' : env.image.manifest.kernelVersion, abi: 2 });
  });

  test('a machine without the module: the module line says so and how to load it', async () => {
    await t!.closeModule();
    expect((await t!.helper.exec('rmmod ptlab')).exitCode).toBe(0);
    try {
      const r = await ptlab('doctor', ...ssh);
      expect(r.out).toMatch(/^\[no\] {3}module \(ptlab\.ko\): \/dev\/ptlab is absent .* — build guest\/kmod .* insmod/m);
    } finally {
      await t!.helper.exec('insmod /lib/modules/$(uname -r)/extra/ptlab.ko allow_msr=$(cat /etc/ptlab-allow-msr)');
      await t!.reopenModule();
    }
  });

  test('an unreachable machine exits 3, saying why', async () => {
    const r = await ptlab('doctor', '--target', 'ssh', '--host', '127.0.0.1', '--port', '1', '--key', env.skip ? '' : env.image.clientKey,
      '--known-host', env.skip ? '' : env.image.hostKeyPub);
    expect({ code: r.code, why: /cannot reach the machine/.test(r.err) }).toEqual({ code: 3, why: true });
  }, 30_000);

  test('options of --target ssh without it are a usage error', async () => {
    expect((await ptlab('doctor', '--host', 'lab1')).code).toBe(2);
    expect((await ptlab('doctor', '--target', 'qemu')).code).toBe(2);
  });
});
