// CPU profiles of the reference model: raw CPUID leaves, family/model/stepping,
// the errata that signature has (driver/hw/errata.ts, docs/sdm/errata.md) and the
// hypervisor quirks (docs/sdm/cpuid.md §6–§7, docs/prior-art.md §5–§6). Which
// values come from a published CPUID dump and which are synthetic is said in
// each profile's `description`.
import { cpuSignature, decodePtCaps, vendorOf, ZERO_REGS, type CpuidRegs, type CpuSignature, type PtCaps } from '../../driver/hw/cpuid.js';
import { errataOf, type ErratumId } from '../../driver/hw/errata.js';
import { KVM_QUIRKS, type MsrQuirk } from '../../driver/hw/msr-rules.js';
import { PtError } from '../../driver/base/errors.js';
import { DEFAULT_CLOCK } from './trace/clock.js';

/** The `--cpu` names. */
export const PROFILE_NAMES = ['broadwell', 'skylake', 'icelake', 'sapphire-rapids', 'kvm-guest', 'full'] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

/**
 * Model behaviours that neither CPUID nor the CPU's errata describe, named by the hypervisor rule
 * they reproduce. A CPU's errata follow from its signature (`CpuProfile.errata`). Every
 * one is a #GP rule of a hypervisor, so they are the shared rule set's `MsrQuirk`s
 * (driver/hw/msr-rules.ts), which reads them from the profile.
 */
export type Quirk = MsrQuirk;

/** One simulated CPU type. */
export interface CpuProfile {
  readonly name: string;
  /** Where the values come from; contains "synthetic" when no published CPUID dump backs them. */
  readonly description: string;
  readonly synthetic: boolean;
  /** DisplayFamily / DisplayModel / stepping of CPUID.01H:EAX, e.g. 0x06 / 0x4F / 1. */
  readonly family: number;
  readonly model: number;
  readonly stepping: number;
  /** The errata of that signature (driver/hw/errata.ts `errataOf`), e.g. BDM106 on Broadwell. */
  readonly errata: ReadonlySet<ErratumId>;
  /** Raw CPUID, keyed by `cpuidKey(leaf, subleaf)`; absent (leaf, subleaf) pairs read as zeros. */
  readonly leaves: ReadonlyMap<string, CpuidRegs>;
  readonly quirks: ReadonlySet<Quirk>;
  /** IA32_VMX_MISC[14]: Intel PT may be used in VMX operation (docs/sdm/msrs.md §13). */
  readonly ptInVmx: boolean;
  /**
   * The CPU reads ToPA entries ahead and caches them from TraceEn 0→1 (the SDM allows it: a table
   * must not be edited while TraceEn=1), so an edit made with TraceEn=1 may go unseen. Default none.
   */
  readonly topaCache?: 'none' | 'all-reachable-at-enable';
}

/** Map key of a CPUID (leaf, subleaf). Leaves without sub-leaves use subleaf 0. */
export function cpuidKey(leaf: number, subleaf: number): string {
  return `${(leaf >>> 0).toString(16)}.${subleaf >>> 0}`;
}

/** Leaves whose ECX selects a sub-leaf (SDM Vol. 2A CPUID). */
const SUBLEAF_LEAVES = new Set([0x4, 0x7, 0xb, 0xd, 0xf, 0x10, 0x12, 0x14, 0x17, 0x18, 0x1f, 0x20]);

/** What CPUID returns on a CPU with this profile, including Intel's out-of-range rule. */
export function cpuidOf(p: CpuProfile, leaf: number, subleaf: number): CpuidRegs {
  leaf >>>= 0;
  const maxBasic = p.leaves.get(cpuidKey(0, 0))?.eax ?? 0;
  const maxExt = p.leaves.get(cpuidKey(0x8000_0000, 0))?.eax ?? 0;
  // SDM Vol. 2A CPUID: an input above the highest basic or extended leaf returns the data of
  // the highest basic leaf (with the same ECX).
  const inRange = leaf >= 0x8000_0000 ? leaf <= maxExt : leaf <= maxBasic;
  if (!inRange) leaf = maxBasic;
  const sub = SUBLEAF_LEAVES.has(leaf) ? subleaf >>> 0 : 0;
  return p.leaves.get(cpuidKey(leaf, sub)) ?? ZERO_REGS;
}

/** The capabilities a profile enumerates (driver/hw/cpuid.ts decode of its leaves). */
export function capsOf(p: CpuProfile): PtCaps {
  return decodePtCaps((l, s) => cpuidOf(p, l, s));
}

/**
 * The signature and errata of the CPU whose raw CPUID is `leaves` (leaf 0 vendor, leaf 1
 * signature), as the driver's probe finds them: a model CPU has the errata of the CPU it claims to be.
 */
export function identityOfLeaves(leaves: ReadonlyMap<string, CpuidRegs>): CpuSignature & { readonly errata: ReadonlySet<ErratumId> } {
  const sig = cpuSignature(leaves.get(cpuidKey(1, 0))?.eax ?? 0);
  return { ...sig, errata: errataOf({ ...sig, vendor: vendorOf(leaves.get(cpuidKey(0, 0)) ?? ZERO_REGS) }) };
}

/** CPUID.0AH:EAX[7:0], the architectural PerfMon version (docs/sdm/cpuid.md §5). */
export function perfmonVersion(p: CpuProfile): number {
  return cpuidOf(p, 0xa, 0).eax & 0xff;
}

// ---- building blocks for the raw leaves ------------------------------------------------------

const regs = (eax: number, ebx = 0, ecx = 0, edx = 0): CpuidRegs => ({ eax: eax >>> 0, ebx: ebx >>> 0, ecx: ecx >>> 0, edx: edx >>> 0 });

/** "GenuineIntel" in EBX, EDX, ECX order (SDM Vol. 2A CPUID leaf 0). */
const GENUINE_INTEL = { ebx: 0x756e_6547, edx: 0x4965_6e69, ecx: 0x6c65_746e };

/** CPUID.1:EAX signature: stepping 3:0, model 7:4, family 11:8, extended model 19:16. */
function signature(family: number, model: number, stepping: number): number {
  return (stepping & 0xf) | ((model & 0xf) << 4) | ((family & 0xf) << 8) | ((model >> 4) << 16);
}

interface LeafSpec {
  readonly maxBasic: number;
  readonly family: number;
  readonly model: number;
  readonly stepping: number;
  /** CPUID.(14H,0) EAX/EBX/ECX and CPUID.(14H,1) EAX/EBX (absent when max sub-leaf is 0). */
  readonly l14: { readonly eax: number; readonly ebx: number; readonly ecx: number; readonly sub1?: readonly [number, number] };
  /** CPUID.(0DH,1):EAX (bit 3 XSAVES) and ECX (supervisor components, bit 8 = PT). */
  readonly xsave1: { readonly eax: number; readonly ecx: number };
  /** CPUID.0AH:EAX[7:0]. */
  readonly perfmon: number;
  readonly maxPhysAddr: number;
  readonly maxLinearAddr: number;
}

/** The raw leaves the model exposes. Feature bits PT does not depend on are left 0 (documented in every description). */
function buildLeaves(s: LeafSpec): Map<string, CpuidRegs> {
  const m = new Map<string, CpuidRegs>();
  m.set(cpuidKey(0, 0), regs(s.maxBasic, GENUINE_INTEL.ebx, GENUINE_INTEL.ecx, GENUINE_INTEL.edx));
  // CPUID.1:ECX[26] XSAVE, [27] OSXSAVE (the model's CR4.OSXSAVE is 1), [21] x2APIC.
  m.set(cpuidKey(1, 0), regs(signature(s.family, s.model, s.stepping), 0, (1 << 21) | (1 << 26) | (1 << 27), 0));
  m.set(cpuidKey(7, 0), regs(0, 1 << 25, 0, 0)); // EBX[25]: Intel PT (docs/sdm/cpuid.md §1)
  // PerfMon: version, 4 GP counters, 48 bits wide, EBX vector length 7 (SDM Vol. 2A leaf 0AH).
  m.set(cpuidKey(0xa, 0), regs(s.perfmon | (4 << 8) | (48 << 16) | (7 << 24), 0, 0, 3));
  // XCR0-supported components: x87, SSE, AVX (component 2: 256 bytes at standard offset 576).
  const ptSupported = (s.xsave1.ecx & 0x100) !== 0;
  m.set(cpuidKey(0xd, 0), regs(0x7, 0x340, 0x340, 0));
  m.set(cpuidKey(0xd, 1), regs(s.xsave1.eax, 0, s.xsave1.ecx, 0)); // EBX is computed live from XCR0|XSS
  m.set(cpuidKey(0xd, 2), regs(0x100, 0x240, 0, 0));
  // Component 8: 0x80 bytes, supervisor (ECX[0]=1), no 64-byte alignment (docs/sdm/cpuid.md §4, xsave.md §1).
  if (ptSupported) m.set(cpuidKey(0xd, 8), regs(0x80, 0, 1, 0));
  m.set(cpuidKey(0x14, 0), regs(s.l14.sub1 ? 1 : 0, s.l14.ebx, s.l14.ecx, 0));
  // TSC/ART ratio of the model's clock (EAX denominator, EBX numerator; crystal frequency not given).
  if (s.maxBasic >= 0x15) m.set(cpuidKey(0x15, 0), regs(DEFAULT_CLOCK.tscArtDen, DEFAULT_CLOCK.tscArtNum, 0, 0));
  if (s.l14.sub1) m.set(cpuidKey(0x14, 1), regs(s.l14.sub1[0], s.l14.sub1[1], 0, 0));
  m.set(cpuidKey(0x8000_0000, 0), regs(0x8000_0008));
  m.set(cpuidKey(0x8000_0008, 0), regs(s.maxPhysAddr | (s.maxLinearAddr << 8)));
  return m;
}

function profile(
  name: string, spec: LeafSpec,
  p: { description: string; synthetic: boolean; quirks?: Quirk[]; ptInVmx: boolean; topaCache?: CpuProfile['topaCache'] },
): CpuProfile {
  const leaves = buildLeaves(spec);
  return Object.freeze({
    name, description: p.description, synthetic: p.synthetic, ...identityOfLeaves(leaves),
    leaves, quirks: new Set(p.quirks ?? []), ptInVmx: p.ptInVmx, ...(p.topaCache ? { topaCache: p.topaCache } : {}),
  });
}

const ONLY_PT_BITS = 'Only the CPUID bits PT depends on are set; other feature bits read 0.';

/** The shipped profiles (docs/sdm/cpuid.md §7). */
export const PROFILES: Readonly<Record<ProfileName, CpuProfile>> = {
  broadwell: profile('broadwell', {
    maxBasic: 0x14, family: 6, model: 0x4f, stepping: 1,
    l14: { eax: 0, ebx: 0x1, ecx: 0x1 },
    xsave1: { eax: 0x1, ecx: 0 }, perfmon: 3, maxPhysAddr: 46, maxLinearAddr: 48,
  }, {
    description: 'Broadwell-E i7-6900K (06_4F): leaf 14H = 0/0x1/0x1 and 0DH,1 = 0x1 and MAXPHYADDR 46 from a real ' +
      'CPUID dump (docs/sdm/cpuid.md §6). Single-entry ToPA, no single range, no XSAVES; BranchEn=1 required by ' +
      `erratum BDM106 (docs/sdm/errata.md). PerfMon version 3 assumed (not in the dump). ${ONLY_PT_BITS}`,
    synthetic: false, ptInVmx: false,
  }),
  skylake: profile('skylake', {
    maxBasic: 0x16, family: 6, model: 0x5e, stepping: 3,
    l14: { eax: 1, ebx: 0xf, ecx: 0x7, sub1: [0x0249_0002, 0x003f_3fff] },
    xsave1: { eax: 0xf, ecx: 0x100 }, perfmon: 4, maxPhysAddr: 39, maxLinearAddr: 48,
  }, {
    description: 'Skylake client (06_5E): leaves 14H and 0DH from real Kaby Lake / Kaby Lake-R dumps (same PT core; ' +
      'docs/sdm/cpuid.md §6, not checked against a Skylake dump). XSAVES of PT supported (0DH,8 = 0x80/0/1). ' +
      `PerfMon version 4. ${ONLY_PT_BITS}`,
    synthetic: false, ptInVmx: true,
  }),
  icelake: profile('icelake', {
    maxBasic: 0x1b, family: 6, model: 0x6a, stepping: 6,
    l14: { eax: 1, ebx: 0xf, ecx: 0x7, sub1: [0x0249_0002, 0x003f_1fff] },
    xsave1: { eax: 0xf, ecx: 0x100 }, perfmon: 5, maxPhysAddr: 46, maxLinearAddr: 57,
  }, {
    description: 'Ice Lake-SP (06_6A), synthetic: no ICX dump was found; leaf 14H is QEMU\'s fixed set, which QEMU says ' +
      `was chosen from ICX silicon (docs/sdm/cpuid.md §6). MAXPHYADDR 46, LA57, PerfMon 5 assumed. ${ONLY_PT_BITS}`,
    synthetic: true, ptInVmx: true,
  }),
  'sapphire-rapids': profile('sapphire-rapids', {
    maxBasic: 0x20, family: 6, model: 0x8f, stepping: 8,
    l14: { eax: 1, ebx: 0x1ff, ecx: 0x7, sub1: [0x0249_0002, 0x003f_003f] },
    xsave1: { eax: 0xf, ecx: 0x100 }, perfmon: 5, maxPhysAddr: 46, maxLinearAddr: 57,
  }, {
    description: 'Sapphire Rapids (06_8F), synthetic: no dump was found. PTWRITE, power events, PSB and PMI ' +
      'preservation, event trace and TNT disable enumerated (unverified which models have them); a cycle-threshold bitmap smaller than 0x1FFF ' +
      '(0x3F, a guess; an Intel engineer says SPR reports fewer encodings than ICX: docs/sdm/cpuid.md §6). ' +
      `MAXPHYADDR 46, LA57, PerfMon 5 assumed. ${ONLY_PT_BITS}`,
    synthetic: true, ptInVmx: true,
  }),
  'kvm-guest': profile('kvm-guest', {
    maxBasic: 0x14, family: 6, model: 0x6a, stepping: 6,
    l14: { eax: 1, ebx: 0xf, ecx: 0x7, sub1: [0x0249_0002, 0x003f_1fff] },
    xsave1: { eax: 0xf, ecx: 0 }, perfmon: 2, maxPhysAddr: 46, maxLinearAddr: 48,
  }, {
    description: 'A QEMU/KVM guest with -cpu host,+intel-pt: QEMU\'s fixed leaf 14H (docs/prior-art.md §5) and KVM\'s #GP ' +
      'rules (docs/prior-art.md §6: no InjectPsbPmiOnEnable, STATUS bits 6/7 #GP, CR3_MATCH[4:0] unchecked, no CTL write ' +
      'in VMX operation); IA32_XSS[8] never supported. Family/model, MAXPHYADDR and PerfMon version 2 are host/KVM ' +
      `dependent: synthetic choices. ${ONLY_PT_BITS}`,
    synthetic: true, quirks: [...KVM_QUIRKS], ptInVmx: true,
  }),
  full: profile('full', {
    maxBasic: 0x20, family: 6, model: 0xff, stepping: 0,
    l14: { eax: 1, ebx: 0x1ff, ecx: 0x8000_000f, sub1: [0xffff_0004, 0x003f_ffff] },
    xsave1: { eax: 0xf, ecx: 0x100 }, perfmon: 5, maxPhysAddr: 52, maxLinearAddr: 57,
  }, {
    description: 'Synthetic, not a real CPU: every PT feature, 4 address ranges, every MTC/CYC encoding, PSBFreq 0..5, ' +
      'LIP, FabricEn, XSAVES of PT (which saves only ranges 0 and 1: docs/sdm/cpuid.md §7). Caches the reachable ToPA ' +
      'entries at every TraceEn 0→1, as the SDM allows, so a table edited while tracing is not seen. ' + ONLY_PT_BITS,
    synthetic: true, ptInVmx: true, topaCache: 'all-reachable-at-enable',
  }),
};

/** The profile for a `--cpu` name; PtError('bad_config') for an unknown name. */
export function getProfile(name: string): CpuProfile {
  if ((PROFILE_NAMES as readonly string[]).includes(name)) return PROFILES[name as ProfileName];
  throw new PtError('bad_config', `unknown CPU profile "${name}" (known: ${PROFILE_NAMES.join(', ')})`);
}

/** A copy of `p` with some raw leaves replaced (tests, and what-if profiles such as "no PT"). */
export function withLeaves(
  p: CpuProfile, name: string, changes: readonly { leaf: number; subleaf?: number; regs: CpuidRegs }[],
  extra: { quirks?: readonly Quirk[]; ptInVmx?: boolean } = {},
): CpuProfile {
  const leaves = new Map(p.leaves);
  for (const c of changes) leaves.set(cpuidKey(c.leaf, c.subleaf ?? 0), c.regs);
  return Object.freeze({
    ...p, name, synthetic: true, leaves, ...identityOfLeaves(leaves),
    description: `${p.description} Modified (${name}): synthetic.`,
    quirks: new Set(extra.quirks ?? p.quirks), ptInVmx: extra.ptInVmx ?? p.ptInVmx,
  });
}
