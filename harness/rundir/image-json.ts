// image.json (docs/design.md "The run directory"): where the workload's code sits in image.bin's
// address space, the CPU's leaf 14H as the probe read it, and what another decoder needs to read
// trace.pt the way ptlab did (interop.ts).
import type { CpuIdentity, TraceTiming } from './interop.js';

/** image.json: where the workload's code sits, and the CPU's leaf 14H. */
export interface ImageJson {
  readonly base: string;
  readonly entry: string;
  readonly bytes: number;
  /** Leaf 0x14 sub-leaves as read by the probe: {subleaf, eax, ebx, ecx, edx} in hex. */
  readonly cpuid14: readonly { readonly subleaf: number; readonly eax: string; readonly ebx: string; readonly ecx: string; readonly edx: string }[];
  readonly profile: string;
  /** The CPU as CPUID names it (libipt's --cpu: its errata depend on it). */
  readonly cpu: CpuIdentity;
  /** The timing parameters of the trace (libipt's --mtc-freq, --nom-freq, --cpuid-0x15.*). */
  readonly timing: TraceTiming;
  /** The errata of that CPU by ptlab's table (driver/hw/errata.ts; docs/sdm/errata.md), sorted. */
  readonly errata: readonly string[];
  /** Where the CPU's CPUID contradicts the errata table (the probe's warnings); usually empty. */
  readonly probeWarnings: readonly string[];
}
