// The shared Target behaviour suite, run against the model for every CPU profile.
import { PROFILE_NAMES } from '../../harness/sim/profiles.js';
import { SimTarget } from '../../harness/sim/sim-target.js';
import { generateWorkload } from '../../harness/sim/workload/index.js';
import { targetContract } from '../target-contract.js';

for (const profile of PROFILE_NAMES) {
  targetContract(`sim:${profile}`, async () => ({
    target: await SimTarget.create({ profile, memory: { ramSize: 64 * 2 ** 20 } }),
    knobs: {
      vendor: 'GenuineIntel',
      absentMsr: 0x573,
      // IA32_RTIT_OUTPUT_BASE exists on every profile (all have ToPA); bits 6:0 are reserved.
      writable: { msr: 0x560, values: [0x10_0000n, 0x20_0000n] },
      reservedWrite: { msr: 0x560, value: 0x10_0001n },
      outOfRangeAddr: 1n << 40n,
      xsavesPt: profile !== 'broadwell' && profile !== 'kvm-guest',
      startWorkload: generateWorkload(1, { branches: 1000 }),
      slices: true,
    },
  }));
}
