// CPUID dumps of docs/sdm/cpuid.md §6/§7 as readers, and the PtCaps profiles the
// hw tests use. Register values are copied from the spec tables by hand.
import { PtError } from '../../driver/base/errors.js';
import { decodePtCaps, type CpuidReader, type CpuidRegs, type PtCaps } from '../../driver/hw/cpuid.js';

const INTEL = { ebx: 0x756e_6547, edx: 0x4965_6e69, ecx: 0x6c65_746e }; // "GenuineIntel"
const Z: CpuidRegs = { eax: 0, ebx: 0, ecx: 0, edx: 0 };

/** A dump: "leaf:subleaf" (hex) → registers. */
export type Dump = Record<string, Partial<CpuidRegs>>;

/**
 * A reader over a dump that behaves like a real CPU for leaves above the maximum basic leaf:
 * it returns the highest basic leaf's data (docs/qemu.md §5).
 */
export function reader(dump: Dump): CpuidReader {
  const maxBasic = dump['0:0']?.eax ?? 0;
  return (leaf, sub) => {
    let key = `${leaf.toString(16)}:${sub}`;
    if (leaf < 0x8000_0000 && leaf > maxBasic) key = `${maxBasic.toString(16)}:${sub}`;
    return { ...Z, ...(dump[key] ?? {}) };
  };
}

/** Broadwell-E i7-6900K (06_4F): L14.0 = 0/0x1/0x1, no sub-leaf 1, MAXPHYADDR 46. */
export const BROADWELL_E: Dump = {
  '0:0': { eax: 0x14, ...INTEL },
  '7:0': { ebx: 0x021c_bfbb },
  '14:0': { eax: 0, ebx: 0x1, ecx: 0x1 },
  // Garbage a CPU might return for sub-leaf 1 beyond max sub-leaf 0: must be ignored.
  '14:1': { eax: 0x0249_0002, ebx: 0x003f_3fff },
  'd:1': { eax: 0x1 },
  '80000000:0': { eax: 0x8000_0008 },
  '80000008:0': { eax: 0x302e },
};

/** Kaby Lake desktop, Pentium G4600 (06_9E), MAXPHYADDR 39. */
export const KABY_LAKE: Dump = {
  '0:0': { eax: 0x16, ...INTEL },
  '7:0': { ebx: 0x029c_6fbf },
  '14:0': { eax: 1, ebx: 0xf, ecx: 0x7 },
  '14:1': { eax: 0x0249_0002, ebx: 0x003f_3fff },
  'd:1': { eax: 0xf, ecx: 0x100 },
  '80000000:0': { eax: 0x8000_0008 },
  '80000008:0': { eax: 0x3027 },
};

/** Kaby Lake-R i5-8350U (06_8E), with CPUID.(0DH,8) = 0x80/0/1. */
export const KABY_LAKE_R: Dump = { ...KABY_LAKE, 'd:8': { eax: 0x80, ebx: 0, ecx: 0x1 } };

/** QEMU `-cpu …,+intel-pt` fixed leaf 14H (docs/prior-art.md §5); other leaves from a Kaby Lake host. */
export const QEMU_PT: Dump = {
  ...KABY_LAKE,
  '14:0': { eax: 1, ebx: 0xf, ecx: 0x7 },
  '14:1': { eax: 0x0249_0002, ebx: 0x003f_1fff },
};

/** QEMU TCG `-cpu max`: AMD vendor, max basic leaf 0xD, leaf 7 EBX = 0x01d843a9 (docs/qemu.md §5). */
export const QEMU_TCG_MAX: Dump = {
  '0:0': { eax: 0xd, ebx: 0x6874_7541, edx: 0x6974_6e65, ecx: 0x444d_4163 },
  '7:0': { ebx: 0x01d8_43a9 },
  'd:0': { eax: 0x21f, ebx: 0x240, ecx: 0x240 },
  'd:1': { eax: 0xf },
  '80000000:0': { eax: 0x8000_0008 },
  '80000008:0': { eax: 0x3028 },
};

/** A CPU whose leaf 14H looks rich but whose leaf 7 EBX[25] = 0. */
export const NO_PT_BIT: Dump = { ...KABY_LAKE, '7:0': { ebx: 0x009c_6fbf } };

/** docs/sdm/cpuid.md §7 `full`: every feature, LIP, 4 ranges, MAXPHYADDR 52, 57-bit linear. */
export const FULL: Dump = {
  '0:0': { eax: 0x20, ...INTEL },
  '7:0': { ebx: 0x0200_0000 },
  '14:0': { eax: 1, ebx: 0x1ff, ecx: 0x8000_000f },
  '14:1': { eax: 0xffff_0004, ebx: 0x003f_ffff },
  'd:1': { eax: 0xf, ecx: 0x100 },
  'd:8': { eax: 0x80, ecx: 0x1 },
  '80000000:0': { eax: 0x8000_0008 },
  '80000008:0': { eax: 0x3934 },
};

/** PT with no optional feature at all (L14.0 EBX = ECX = 0): only CTL and STATUS exist. */
export const NO_FEATURES: Dump = {
  '0:0': { eax: 0x14, ...INTEL },
  '7:0': { ebx: 0x0200_0000 },
  '14:0': { eax: 0, ebx: 0, ecx: 0 },
  '80000000:0': { eax: 0x8000_0008 },
  '80000008:0': { eax: 0x3027 },
};

export const caps = (d: Dump): PtCaps => decodePtCaps(reader(d));
export const CAPS = {
  none: caps(NO_FEATURES),
  bdw: caps(BROADWELL_E),
  kbl: caps(KABY_LAKE),
  qemu: caps(QEMU_PT),
  full: caps(FULL),
} as const;
export type ProfileName = keyof typeof CAPS;

/** The PtError code a call throws, or 'none'. */
export function thrownCode(fn: () => unknown): string {
  try { fn(); } catch (e) { return e instanceof PtError ? e.code : `not a PtError: ${String(e)}`; }
  return 'none';
}
