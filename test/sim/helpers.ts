// Shared helpers of the sim tests: a fresh MSR file per profile, and hand-written variants.
import { MsrFile } from '../../harness/sim/msr-file.js';
import { PROFILES, withLeaves, type CpuProfile, type ProfileName } from '../../harness/sim/profiles.js';

/** A fresh MSR file for a shipped profile or a CpuProfile. */
export function msrFile(p: ProfileName | CpuProfile): MsrFile {
  return new MsrFile(typeof p === 'string' ? PROFILES[p] : p);
}

const r = (eax: number, ebx = 0, ecx = 0, edx = 0) => ({ eax, ebx, ecx, edx });

/** Hand-made CPUs for rules no shipped profile reaches. */
export const VARIANTS = {
  /** CPUID.(EAX=07H,ECX=0):EBX[25] = 0. */
  noPt: withLeaves(PROFILES.skylake, 'no-pt', [{ leaf: 7, regs: r(0) }]),
  /** Only trace-transport output: L14.0.ECX = 0x8 (no ToPA, no single range). */
  fabricOnly: withLeaves(PROFILES.full, 'fabric-only', [{ leaf: 0x14, regs: r(1, 0x1ff, 0x8) }]),
  /** ToPA and FabricEn, no single range: L14.0.ECX = 0x9. */
  topaFabric: withLeaves(PROFILES.full, 'topa-fabric', [{ leaf: 0x14, regs: r(1, 0x1ff, 0x9) }]),
  /** Skylake without CR3 filtering: L14.0.EBX = 0xE. */
  noCr3: withLeaves(PROFILES.skylake, 'no-cr3', [{ leaf: 0x14, regs: r(1, 0xe, 0x7) }]),
  /** kvm-guest whose leaf 14H claims every SDMnew bit (EBX = 0x1CF): KVM still refuses them. */
  kvmClaimsAll: withLeaves(PROFILES['kvm-guest'], 'kvm-claims-all', [{ leaf: 0x14, regs: r(1, 0x1cf, 0x7) }]),
} as const;

/** The #GP rule a write raises, or 'ok'. */
export function wrRule(f: MsrFile, msr: number, value: bigint): string {
  return f.write(msr, value)?.rule ?? 'ok';
}

/** The #GP rule a read raises, or 'ok'. */
export function rdRule(f: MsrFile, msr: number): string {
  const r = f.read(msr);
  return r.ok ? 'ok' : r.fault.rule;
}

/** Every MSR value of the file, for "changes nothing" checks. */
export function snapshot(f: MsrFile): Record<string, bigint | bigint[]> {
  return {
    ctl: f.ctl, status: f.status, outputBase: f.outputBase, maskPtrs: f.maskPtrs, cr3Match: f.cr3Match,
    addrA: [...f.addrA], addrB: [...f.addrB], globalStatus: f.globalStatus, xss: f.xss, lvtPmi: f.lvtPmi,
  };
}

/** CTL values used across tests: TraceEn|OS|ToPA|BranchEn, and the same without TraceEn. */
export const CTL_TOPA_ON = 0x2105n;
export const CTL_TOPA_OFF = 0x2104n;
