// A real CPU's "profile" for scenario applicability (`--target qemu --pt hardware`, `--target
// ssh`): the raw CPUID leaves PT enumeration needs (docs/sdm/cpuid.md §1–§5), read once from the
// target, in the CpuProfile shape the scenarios' skip rules read. Its errata are those of its
// CPUID signature (driver/hw/errata.ts), so a scenario skips on a real Broadwell as on the model's;
// quirks are the model's hypervisor rules, so a real CPU has none: what it does is what it does.
import type { CpuidRegs } from '../../driver/hw/cpuid.js';
import type { Target } from '../../driver/target.js';
import { cpuidKey, identityOfLeaves, type CpuProfile, type Quirk } from '../sim/profiles.js';

/** The run-directory name of a probed CPU (out/<scenario>/probed/). */
export const PROBED_PROFILE = 'probed';

/**
 * (leaf, subleaf) pairs read: vendor and max leaf, signature, the PT bit (07H:EBX[25]), PerfMon
 * (0AH), XSAVE (0DH.0/1/8), PT (14H.0/1) and address widths (80000008H).
 */
const LEAVES: readonly (readonly [number, number])[] = [
  [0, 0], [1, 0], [7, 0], [0xa, 0], [0xd, 0], [0xd, 1], [0xd, 8], [0x14, 0], [0x14, 1], [0x8000_0000, 0], [0x8000_0008, 0],
];

/** The CPUID of `target`'s CPU 0 as a CpuProfile named PROBED_PROFILE. */
export async function probedProfile(target: Target, opts: { signal?: AbortSignal } = {}): Promise<CpuProfile> {
  const leaves = new Map<string, CpuidRegs>();
  for (const [leaf, sub] of LEAVES) leaves.set(cpuidKey(leaf, sub), await target.cpuid(leaf, sub, 0, opts));
  return Object.freeze({
    name: PROBED_PROFILE, description: `CPUID of ${target.description}`, synthetic: false, ...identityOfLeaves(leaves),
    leaves, quirks: new Set<Quirk>(), ptInVmx: false,
  });
}
