// Probe: read CPUID through the target into PtCaps, the CPU's signature and its
// errata (docs/design.md step 1; docs/sdm/cpuid.md; docs/sdm/errata.md). The raw
// leaves travel with the trace (docs/prior-art.md §3.1).
import { cpuSignature, decodePtCaps, PT_CPUID_QUERIES, ZERO_REGS, type CpuidRegs, type CpuSignature, type PtCaps } from './hw/cpuid.js';
import { enumerationMismatches, errataOf, type ErratumId } from './hw/errata.js';
import type { CallOpts, Target } from './target.js';

/** One CPUID result as read from the target. */
export interface CpuidRecord {
  readonly leaf: number;
  readonly subleaf: number;
  readonly regs: CpuidRegs;
}

/** What a probe found: the decoded capabilities, the CPU and its errata, and the raw leaves they came from. */
export interface ProbeResult {
  readonly caps: PtCaps;
  /** DisplayFamily, DisplayModel and stepping of CPUID.01H:EAX. */
  readonly cpu: CpuSignature;
  /** The errata of that CPU (driver/hw/errata.ts), e.g. BDM106 on Broadwell; none on a CPU not from Intel. */
  readonly errata: ReadonlySet<ErratumId>;
  /** Where CPUID contradicts the errata table (e.g. a Broadwell model enumerating multi-entry ToPA); informational. */
  readonly warnings: readonly string[];
  readonly cpuid: readonly CpuidRecord[];
}

/** Reads every leaf of PT_CPUID_QUERIES from `cpu`; decodes PtCaps, the signature and the errata. */
export async function probe(target: Target, cpu: number, opts?: CallOpts): Promise<ProbeResult> {
  const cpuid: CpuidRecord[] = [];
  for (const [leaf, subleaf] of PT_CPUID_QUERIES) {
    cpuid.push({ leaf, subleaf, regs: await target.cpuid(leaf, subleaf, cpu, opts) });
  }
  const find = (leaf: number, subleaf: number): CpuidRegs =>
    cpuid.find((r) => r.leaf === leaf && r.subleaf === subleaf)?.regs ?? ZERO_REGS;
  const caps = decodePtCaps(find);
  const sig = cpuSignature(find(1, 0).eax);
  const errata = errataOf({ ...sig, vendor: caps.vendor });
  return { caps, cpu: sig, errata, warnings: enumerationMismatches(sig, errata, caps), cpuid };
}

/** The leaf 14H records of a probe, for image.json's `cpuid14`. */
export function leaf14(p: ProbeResult): readonly CpuidRecord[] {
  return p.cpuid.filter((r) => r.leaf === 0x14);
}
