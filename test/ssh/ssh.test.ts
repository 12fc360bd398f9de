// SSH against dropbear in one TCG guest: exec with output and exit code, the pinned host key
// (a wrong one is refused), and the Target contract for SshTarget (the helper over SSH).
import { describe, expect, test, beforeAll, afterAll } from 'vitest';
import { SshError } from '../../harness/ssh/errors.js';
import { imageSshKeys, SshClient, type SshConfig } from '../../harness/ssh/ssh-client.js';
import { SshTarget } from '../../harness/ssh/ssh-target.js';
import { QemuVm } from '../../harness/qemu/vm.js';
import { targetContract } from '../target-contract.js';
import { qemuTestEnv } from '../qemu/env.js';
import { TCG_KNOBS } from '../qemu/tcg-knobs.js';

const env = await qemuTestEnv();

describe.skipIf(env.skip)(`SSH to a TCG guest${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  let vm: QemuVm | undefined;
  let cfg: SshConfig;
  let clientPub: string;

  beforeAll(async () => {
    if (env.skip) return;
    vm = await QemuVm.launch(
      { accel: 'tcg', cpu: 'max', smp: 1, memoryMiB: 256, kernel: env.image.kernel, initrd: env.image.initrd },
      { timeoutMs: 90_000 },
    );
    const keys = await imageSshKeys(env.image.hostKeyPub, env.image.clientKey);
    cfg = { host: '127.0.0.1', port: vm.sshPort!, username: 'root', privateKey: keys.privateKey, hostKey: keys.hostKey };
    clientPub = (await imageSshKeys(`${env.image.clientKey}.pub`, env.image.clientKey)).hostKey;
    // dropbear starts a moment after the guest agent that launch() waits for.
    await (await SshClient.connectWhenReady(cfg, { timeoutMs: 30_000 })).close();
  });

  afterAll(async () => {
    await vm?.dispose();
  });

  test('exec returns stdout, stderr and the exit code', async () => {
    await using ssh = await SshClient.connect(cfg);
    const r = await ssh.exec('echo out; echo err >&2; exit 3');
    expect({ code: r.exitCode, out: Buffer.from(r.stdout).toString(), err: Buffer.from(r.stderr).toString() })
      .toEqual({ code: 3, out: 'out\n', err: 'err\n' });
  });

  test('a host key other than the pinned one is refused with SshError host_key_mismatch', async () => {
    const e = await SshClient.connect({ ...cfg, hostKey: clientPub }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SshError);
    expect((e as SshError).failure).toBe('host_key_mismatch');
  });

  describe('SshTarget', () => {
    targetContract('ssh:tcg-guest', async () => ({
      // TCG_KNOBS' writable MSR (IA32_PKRS) is outside the PT allowlist; the test guest's module lists it.
      target: await SshTarget.connect({ ...cfg, label: 'tcg-guest', allowMsr: true }),
      knobs: TCG_KNOBS,
    }));
  });
});
