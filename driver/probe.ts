// Probe: read CPUID through the target into PtCaps (docs/design.md step 1;
// docs/sdm/cpuid.md). The raw leaves travel with the trace (docs/prior-art.md §3.1).
import { decodePtCaps, PT_CPUID_QUERIES, ZERO_REGS, type CpuidRegs, type PtCaps } from './hw/cpuid.js';
import type { CallOpts, Target } from './target.js';

/** One CPUID result as read from the target. */
export interface CpuidRecord {
  readonly leaf: number;
  readonly subleaf: number;
  readonly regs: CpuidRegs;
}

/** What a probe found: the decoded capabilities and the raw leaves they came from. */
export interface ProbeResult {
  readonly caps: PtCaps;
  readonly cpuid: readonly CpuidRecord[];
}

/** Reads every leaf `decodePtCaps` needs (PT_CPUID_QUERIES) from `cpu` and decodes PtCaps. */
export async function probe(target: Target, cpu: number, opts?: CallOpts): Promise<ProbeResult> {
  const cpuid: CpuidRecord[] = [];
  for (const [leaf, subleaf] of PT_CPUID_QUERIES) {
    cpuid.push({ leaf, subleaf, regs: await target.cpuid(leaf, subleaf, cpu, opts) });
  }
  const find = (leaf: number, subleaf: number): CpuidRegs =>
    cpuid.find((r) => r.leaf === leaf && r.subleaf === subleaf)?.regs ?? ZERO_REGS;
  return { caps: decodePtCaps(find), cpuid };
}

/** The leaf 14H records of a probe, for image.json's `cpuid14`. */
export function leaf14(p: ProbeResult): readonly CpuidRecord[] {
  return p.cpuid.filter((r) => r.leaf === 0x14);
}
