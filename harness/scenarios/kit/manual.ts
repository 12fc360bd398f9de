// Hand-programmed runs for the error scenarios: the driver never builds a bad
// ToPA table or a misaligned range, so these write the table and the MSRs
// themselves through the recorded target (docs/sdm/output.md §3–§4 by hand).
import { IA32_RTIT_CTL, IA32_RTIT_STATUS } from '../../../driver/hw/msrs.js';
import type { PhysRegion } from '../../../driver/target.js';
import type { ScenarioContext } from './context.js';

const CTL = 0x570, STATUS = 0x571, OUTPUT_BASE = 0x560, MASK_PTRS = 0x561;

/** A ToPA entry from docs/sdm/output.md §4.2: Base in 63:12, Size in 9:6, STOP 4, INT 2, END 0. */
export function rawEntry(base: bigint, o: { size?: number; end?: boolean } = {}): bigint {
  return base | (BigInt(o.size ?? 0) << 6n) | (o.end ? 1n : 0n);
}

/** Writes little-endian 64-bit values at `addr`. */
export async function writeU64(ctx: ScenarioContext, addr: bigint, values: readonly bigint[]): Promise<void> {
  const b = new Uint8Array(8 * values.length);
  const dv = new DataView(b.buffer);
  values.forEach((v, i) => dv.setBigUint64(8 * i, v, true));
  await ctx.target.phys.write(addr, b);
}

/** What a hand-programmed run ended with (read after TraceEn=0, when the values are exact). */
export interface ManualEnd {
  readonly status: ReturnType<typeof IA32_RTIT_STATUS.decode>;
  readonly maskPtrs: bigint;
  readonly outputBase: bigint;
}

/**
 * Starts the seeded workload held at its entry, programs STATUS=0, OUTPUT_BASE, OUTPUT_MASK_PTRS
 * and CTL (TraceEn=1, User, BranchEn, ToPA as asked) once it waits there, lets it run to its exit,
 * clears TraceEn and reads STATUS and the pointers: the late enable, as the driver's own runs do
 * (TraceSession.launch).
 */
export async function manualRun(ctx: ScenarioContext, o: { toPA: boolean; outputBase: bigint; maskPtrs: bigint }): Promise<ManualEnd> {
  const t = ctx.target;
  const ctl = IA32_RTIT_CTL.encode({ User: true, BranchEn: true, ToPA: o.toPA });
  {
    await using exec = t.start(ctx.workload(), 0, { held: true });
    await exec.placed();
    const res = await t.msrBatch(0, [
      { op: 'wrmsr', msr: CTL, value: 0n },
      { op: 'wrmsr', msr: STATUS, value: 0n },
      { op: 'wrmsr', msr: OUTPUT_BASE, value: o.outputBase },
      { op: 'wrmsr', msr: MASK_PTRS, value: o.maskPtrs },
      { op: 'wrmsr', msr: CTL, value: ctl | 1n },
    ]);
    const bad = res.find((r) => !r.ok);
    if (bad && !bad.ok) throw new Error(`programming faulted: ${bad.fault.reason}`);
    await t.pmiEnable(0);
    await exec.go();
    for await (const ev of exec.events) if (ev.kind === 'exit') break;
  }
  await t.wrmsr(0, CTL, ctl);
  return {
    status: IA32_RTIT_STATUS.decode(await t.rdmsr(0, STATUS)),
    maskPtrs: await t.rdmsr(0, MASK_PTRS),
    outputBase: await t.rdmsr(0, OUTPUT_BASE),
  };
}

/** Allocates `size` bytes aligned to `align` through the recorded target. */
export function alloc(ctx: ScenarioContext, size: number, align = size): Promise<PhysRegion> {
  return ctx.target.phys.alloc(size, align);
}
