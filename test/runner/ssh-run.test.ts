// `ptlab run --target ssh` against dropbear in a TCG guest (the guest image ships the module and
// ptlab-helper, like a lab machine): it connects with the pinned host key, starts the helper,
// probes CPUID — and refuses, since a TCG CPU does not enumerate Intel PT — with exit 3, the
// probe's reason, and nothing written. A wrong pinned key is refused before authentication.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { QemuVm } from '../../harness/qemu/vm.js';
import { imageSshKeys, SshClient } from '../../harness/ssh/ssh-client.js';
import { ptlab } from '../cli/run-main.js';
import { qemuTestEnv } from '../qemu/env.js';
import { tmpRoot } from '../scenarios/tmp.js';

const env = await qemuTestEnv();
const root = await tmpRoot('ptlab-ssh-run-');

describe.skipIf(env.skip)(`ptlab run --target ssh to a TCG guest${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  let vm: QemuVm | undefined;
  let ssh: string[] = [];
  let hostKeyPub = '', clientKey = '';

  beforeAll(async () => {
    if (env.skip) return;
    vm = await QemuVm.launch(
      { accel: 'tcg', cpu: 'max', smp: 1, memoryMiB: 256, kernel: env.image.kernel, initrd: env.image.initrd },
      { timeoutMs: 90_000 },
    );
    const keys = await imageSshKeys(env.image.hostKeyPub, env.image.clientKey);
    // dropbear starts a moment after the guest agent that launch() waits for.
    await (await SshClient.connectWhenReady({ host: '127.0.0.1', port: vm.sshPort!, username: 'root', ...keys }, { timeoutMs: 30_000 })).close();
    ({ hostKeyPub, clientKey } = env.image);
    ssh = ['--target', 'ssh', '--host', '127.0.0.1', '--port', String(vm.sshPort!), '--user', 'root', '--key', clientKey];
  });

  afterAll(async () => {
    await vm?.dispose();
  });

  test('ptlab replay on that machine is refused the same way: exit 3, the CPUID reason, nothing written', async () => {
    const rec = join(root, 'recorded');
    expect((await ptlab('run', 'err-reserved-bit', '--cpu', 'skylake', '--out', rec)).code).toBe(0);
    const out = join(root, 'replay-no-pt');
    const r = await ptlab('replay', join(rec, 'err-reserved-bit', 'skylake'), ...ssh, '--known-host', hostKeyPub, '--out', out);
    expect({ code: r.code, reason: /ssh:127\.0\.0\.1: .*does not enumerate Intel PT/.test(r.err), written: existsSync(out) })
      .toEqual({ code: 3, reason: true, written: false });
  });

  test('a CPU without Intel PT is refused after the probe: exit 3, the CPUID reason, nothing written', async () => {
    const out = join(root, 'no-pt');
    const r = await ptlab('run', 'topa-grow', ...ssh, '--known-host', hostKeyPub, '--out', out);
    expect({ code: r.code, reason: /ssh:127\.0\.0\.1: .*does not enumerate Intel PT/.test(r.err), hint: r.err.includes('--pt model'), written: existsSync(out) })
      .toEqual({ code: 3, reason: true, hint: true, written: false });
  });

  test('a host key other than the pinned one is refused: exit 3 with host_key_mismatch', async () => {
    const r = await ptlab('run', 'topa-grow', ...ssh, '--known-host', `${clientKey}.pub`, '--out', join(root, 'bad-key'));
    expect([r.code, /not the pinned key/.test(r.err)]).toEqual([3, true]);
  });
});
