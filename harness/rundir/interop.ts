// What another decoder needs to read a run's trace the way ptlab did: the CPU's
// identity (libipt applies its errata by family/model/stepping) and the timing parameters behind
// MTC, TMA and CYC (docs/sdm/packets.md §3.7–§3.11), kept in image.json; and the equivalent
// libipt command lines (ptdump, ptxed), kept in result.json.
import { hex } from '../../driver/base/hex.js';
import { cpuSignature } from '../../driver/hw/cpuid.js';

/** The CPU as CPUID leaf 0 and leaf 1 name it (SDM Vol. 2A, CPUID leaf 01H: the display family and model). */
export interface CpuIdentity {
  readonly vendor: string;
  readonly family: number;
  readonly model: number;
  readonly stepping: number;
}

/** The timing parameters libipt asks for; null where the CPU does not report one. */
export interface TraceTiming {
  /** IA32_RTIT_CTL.MTCFreq of the run's trace (null when MTC was off). */
  readonly mtcFreq: number | null;
  /** MSR_PLATFORM_INFO[15:8], the maximum non-turbo ratio. */
  readonly nomFreq: number | null;
  /** CPUID.15H EAX (denominator) and EBX (numerator) of the TSC/ART ratio. */
  readonly cpuid15: { readonly eax: number; readonly ebx: number } | null;
}

/** Vendor string of CPUID leaf 0 (EBX, EDX, ECX as little-endian ASCII). */
export function vendorOf(ebx: number, ecx: number, edx: number): string {
  const b = Buffer.alloc(12);
  b.writeUInt32LE(ebx >>> 0, 0); b.writeUInt32LE(edx >>> 0, 4); b.writeUInt32LE(ecx >>> 0, 8);
  return b.toString('latin1');
}

/** The vendor and the display family, model and stepping of CPUID.1:EAX (driver/hw/cpuid.ts `cpuSignature`). */
export function identityOf(vendor: string, eax1: number): CpuIdentity {
  return { vendor, ...cpuSignature(eax1) };
}

/** The flags libipt's tools take for `cpu` and `timing` (ptdump and ptxed alike). */
function configFlags(cpu: CpuIdentity, t: TraceTiming): string[] {
  const out = [`--cpu ${cpu.family}/${cpu.model}/${cpu.stepping}`];
  if (t.mtcFreq !== null) out.push(`--mtc-freq ${t.mtcFreq}`);
  if (t.nomFreq !== null) out.push(`--nom-freq ${t.nomFreq}`);
  if (t.cpuid15 !== null) out.push(`--cpuid-0x15.eax ${t.cpuid15.eax}`, `--cpuid-0x15.ebx ${t.cpuid15.ebx}`);
  return out;
}

/** The libipt command lines that decode a run directory's trace.pt (against image.bin at `base` for ptxed), run from inside it. */
export function libiptCommands(cpu: CpuIdentity, t: TraceTiming, base: bigint): { readonly ptdump: string; readonly ptxed: string } {
  const flags = configFlags(cpu, t).join(' ');
  return { ptdump: `ptdump ${flags} trace.pt`, ptxed: `ptxed ${flags} --pt trace.pt --raw image.bin:${hex(base)}` };
}
