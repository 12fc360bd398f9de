// The shared Target behaviour suite against `--pt model` on a TCG guest: the model attached to a
// QemuTarget by harness/hybrid/attach-model.ts, the routing target owning the VM too (two boots: the
// suite's own target and the one its disposal test makes). The PT MSRs fault as the skylake
// profile says; start and slices behave as on the sim target.
import { describe } from 'vitest';
import { attachModel } from '../../harness/hybrid/attach-model.js';
import { QemuTarget } from '../../harness/qemu/qemu-target.js';
import { generateWorkload } from '../../harness/sim/workload/index.js';
import { qemuTestEnv } from '../qemu/env.js';
import { targetContract, type ContractKnobs } from '../target-contract.js';

const env = await qemuTestEnv();

/**
 * skylake enumerates 2 address ranges (CPUID.(EAX=14H,ECX=1):EAX[2:0] = 2), so ADDR2_A (0x584)
 * raises #GP (docs/sdm/msrs.md §9 G2); ADDR0_A takes canonical addresses and a value with bit 47 set
 * and bits 63:48 clear is not canonical for 48-bit linear addresses (docs/sdm/msrs.md §8).
 */
const MODEL_KNOBS: ContractKnobs = {
  vendor: 'GenuineIntel',
  absentMsr: 0x584,
  writable: { msr: 0x580, values: [0x1000n, 0x7fff_ffff_f000n] },
  reservedWrite: { msr: 0x580, value: 1n << 47n },
  outOfRangeAddr: 1n << 40n,
  xsavesPt: true,
  startWorkload: generateWorkload(1, { branches: 2_000 }),
  slices: true,
};

describe.skipIf(env.skip)(`qemu --pt model contract${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  if (env.skip) return;
  const image = env.image;
  targetContract('qemu:tcg+model:skylake', async () => {
    const qemu = await QemuTarget.launch({ accel: 'tcg', cpu: 'max', smp: 1, memoryMiB: 256, kernel: image.kernel, initrd: image.initrd }, { timeoutMs: 90_000 });
    try {
      return { target: await attachModel(qemu, { profile: 'skylake', ownsGuest: true }), knobs: MODEL_KNOBS };
    } catch (e) {
      await qemu.dispose();
      throw e;
    }
  });
});
