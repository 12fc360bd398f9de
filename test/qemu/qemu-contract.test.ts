// The shared Target behaviour suite against QemuTarget on a TCG guest (two boots: the suite's
// own target and the one its disposal test makes).
import { describe } from 'vitest';
import { QemuTarget } from '../../harness/qemu/qemu-target.js';
import { targetContract } from '../target-contract.js';
import { qemuTestEnv } from './env.js';
import { TCG_KNOBS } from './tcg-knobs.js';

const env = await qemuTestEnv();

describe.skipIf(env.skip)(`qemu contract${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  if (env.skip) return;
  const image = env.image;
  targetContract('qemu:tcg', async () => ({
    target: await QemuTarget.launch(
      { accel: 'tcg', cpu: 'max', smp: 1, memoryMiB: 256, kernel: image.kernel, initrd: image.initrd },
      // TCG_KNOBS' writable MSR (IA32_PKRS) is outside the PT allowlist; the test guest's module lists it.
      { timeoutMs: 90_000, allowMsr: true },
    ),
    knobs: TCG_KNOBS,
  }));
});
