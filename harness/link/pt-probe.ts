// Whether a real CPU (a QEMU guest's, a lab machine's) implements Intel PT, decided from CPUID
// only: under TCG the PT MSRs read 0 and writes vanish without #GP, so MSR reads prove nothing
// (docs/qemu.md §5). `-cpu max` under TCG even reports AuthenticAMD with max basic leaf 0xD, and
// leaf 0x14 then returns leaf 0xD's data — so the vendor and the max leaf come first.
import { UnsupportedError } from '../../driver/base/errors.js';
import type { CpuidRegs } from '../../driver/hw/cpuid.js';

/** What the probe found; `reason` says which check failed, in CPUID terms. */
export type PtProbe =
  | { readonly available: true; readonly vendor: string; readonly maxLeaf: number }
  | { readonly available: false; readonly vendor: string; readonly maxLeaf: number; readonly cpuid: string; readonly reason: string };

/** The vendor string of CPUID.0 (EBX, EDX, ECX). */
export function cpuVendor(leaf0: CpuidRegs): string {
  const b = Buffer.alloc(12);
  b.writeUInt32LE(leaf0.ebx >>> 0, 0);
  b.writeUInt32LE(leaf0.edx >>> 0, 4);
  b.writeUInt32LE(leaf0.ecx >>> 0, 8);
  return b.toString('latin1');
}

/**
 * Decides from CPUID.0 and CPUID.(EAX=07H,ECX=0): PT needs vendor GenuineIntel, a max basic
 * leaf ≥ 14H, and CPUID.(EAX=07H,ECX=0):EBX[25] = 1 (docs/sdm/cpuid.md §1, SDM Vol. 3C "Detection
 * of Intel Processor Trace and Capability Enumeration").
 */
export function judgePt(leaf0: CpuidRegs, leaf7: CpuidRegs | undefined): PtProbe {
  const vendor = cpuVendor(leaf0);
  const maxLeaf = leaf0.eax >>> 0;
  if (vendor !== 'GenuineIntel') {
    return { available: false, vendor, maxLeaf, cpuid: 'CPUID.0 vendor', reason: `the CPU vendor is ${JSON.stringify(vendor)}, not "GenuineIntel"` };
  }
  if (maxLeaf < 0x14) {
    return { available: false, vendor, maxLeaf, cpuid: 'CPUID.0:EAX', reason: `the maximum basic CPUID leaf is 0x${maxLeaf.toString(16)}, below 0x14` };
  }
  if (leaf7 === undefined || ((leaf7.ebx >>> 25) & 1) === 0) {
    return { available: false, vendor, maxLeaf, cpuid: 'CPUID.(EAX=07H,ECX=0):EBX[25]', reason: 'CPUID.(EAX=07H,ECX=0):EBX[25] = 0' };
  }
  return { available: true, vendor, maxLeaf };
}

/** Reads the two leaves through `cpuid` and judges them (leaf 7 only when it exists). */
export async function probePt(cpuid: (leaf: number, subleaf: number) => Promise<CpuidRegs>): Promise<PtProbe> {
  const leaf0 = await cpuid(0, 0);
  const leaf7 = (leaf0.eax >>> 0) >= 7 ? await cpuid(7, 0) : undefined;
  return judgePt(leaf0, leaf7);
}

/** The typed refusal of `--pt hardware` on a CPU without PT (names the CPUID bit and the ways out). */
export function ptRefusal(p: PtProbe & { available: false }, where: string): UnsupportedError {
  return new UnsupportedError('Intel PT', p.cpuid,
    `${where} does not enumerate Intel PT: ${p.reason} (vendor ${JSON.stringify(p.vendor)}, max basic leaf 0x${p.maxLeaf.toString(16)}); ` +
    'PT MSR reads are not trusted (under TCG they read 0 and writes vanish). Use --pt model, or a PT host; see `ptlab doctor`.');
}
