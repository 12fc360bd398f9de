// A real CPU's profile (probed-profile.ts, what `--target ssh` and `--target qemu --pt hardware`
// run against) gets its errata from the CPUID it probes, so a scenario that an erratum rules out
// skips on a real Broadwell as it does on the model's. The "real CPU" here is a SimTarget whose
// CPUID.1:EAX names the CPU; nothing of the model's profile reaches the probed one but CPUID.
import { describe, expect, test } from 'vitest';
import { probedProfile, PROBED_PROFILE } from '../../harness/runner/probed-profile.js';
import { branchDisable } from '../../harness/scenarios/branch-disable.js';
import { capsOf, cpuidOf, PROFILES, withLeaves, type CpuProfile } from '../../harness/sim/profiles.js';
import { SimTarget } from '../../harness/sim/sim-target.js';

async function probedFrom(p: CpuProfile): Promise<CpuProfile> {
  await using t = await SimTarget.create({ profile: p });
  return await probedProfile(t);
}

/** Skylake's PT leaves with another CPUID.1:EAX signature: only the signature says "Broadwell". */
const skylakeLeavesAs = (eax1: number): CpuProfile =>
  withLeaves(PROFILES.skylake, `signature-${eax1.toString(16)}`, [{ leaf: 1, regs: { ...cpuidOf(PROFILES.skylake, 1, 0), eax: eax1 } }]);

describe('probedProfile: errata from the probed signature', () => {
  test('Broadwell-E (CPUID.1:EAX 0x406F1, 06_4F stepping 1) has BDM106 and no quirk', async () => {
    const p = await probedFrom(PROFILES.broadwell);
    expect([p.name, p.family, p.model, p.stepping, p.errata.has('BDM106'), p.quirks.size]).toEqual([PROBED_PROFILE, 6, 0x4f, 1, true, 0]);
  });

  test.for([
    { cpu: '06_3D', eax1: 0x306d4 }, { cpu: '06_47', eax1: 0x40671 }, { cpu: '06_56', eax1: 0x50663 },
  ])('a Broadwell signature ($cpu) has BDM106 whatever the PT leaves say', async ({ eax1 }) => {
    expect((await probedFrom(skylakeLeavesAs(eax1))).errata.has('BDM106')).toBe(true);
  });

  test('Skylake (06_5E) has no BDM106', async () => {
    const p = await probedFrom(PROFILES.skylake);
    expect([p.family, p.model, p.errata.has('BDM106'), p.errata.has('SKL014')]).toEqual([6, 0x5e, false, true]);
  });
});

describe('branch-disable on a probed CPU (the ssh target)', () => {
  const skip = (p: CpuProfile): string | undefined => branchDisable.skip({ target: 'ssh', ptUnit: 'hardware', profile: p, caps: capsOf(p), seed: 1 });

  test('skips on a probed Broadwell, naming the erratum', async () => {
    expect(skip(await probedFrom(PROFILES.broadwell))).toBe('erratum BDM106 of this CPU (06_4FH): IA32_RTIT_CTL with TraceEn=1 and BranchEn=0 raises #GP');
  });

  test('runs on a probed Skylake', async () => {
    expect(skip(await probedFrom(PROFILES.skylake))).toBeUndefined();
  });
});
