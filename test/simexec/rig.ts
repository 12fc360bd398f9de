// End-to-end set-up for the execution-engine tests WITHOUT the real driver: the
// test programs the MSRs itself through the Target API (docs/design.md "One trace
// run" steps 3–5), runs a generated workload and reads the output back.
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import type { Encodable } from '../../driver/hw/field.js';
import { topaEntry } from '../../driver/hw/topa.js';
import type { PhysRegion, TargetEvent } from '../../driver/target.js';
import { SimTarget, type SimTargetOptions } from '../../harness/sim/sim-target.js';
import { generateWorkload, type GeneratedWorkload, type WorkloadOptions } from '../../harness/sim/workload/index.js';
import { PacketDecoder } from '../../driver/decode/index.js';
import { packetName } from '../../driver/decode/record.js';

export type CtlFields = Encodable<typeof IA32_RTIT_CTL.fields>;
/** User-mode branch tracing (the flow-json default: OS=0 hides the kernel). */
export const USER: CtlFields = { User: true, BranchEn: true };

export const CTL = 0x570, STATUS = 0x571, OUTPUT_BASE = 0x560, MASK_PTRS = 0x561, GLOBAL_STATUS = 0x38e;
export const GLOBAL_STATUS_RESET = 0x390;

/** A sim target with truth recording on unless told otherwise. */
export function sim(o: Partial<SimTargetOptions> = {}): Promise<SimTarget> {
  return SimTarget.create({ profile: 'skylake', ...o, trace: { truth: true, ...o.trace } });
}

export function workload(seed: number, o: WorkloadOptions = {}): GeneratedWorkload {
  return generateWorkload(seed, { branches: 4000, ...o });
}

/** Writes a little-endian u64 array at `addr`. */
export async function writeU64(t: SimTarget, addr: bigint, values: readonly bigint[]): Promise<void> {
  const b = new Uint8Array(8 * values.length);
  const dv = new DataView(b.buffer);
  values.forEach((v, i) => dv.setBigUint64(8 * i, v, true));
  await t.phys.write(addr, b);
}

/** STATUS=0, OUTPUT_BASE = region, MASK_PTRS = size−1 (offset 0), then CTL with TraceEn=1 (single range, docs/sdm/output.md §3). */
export async function programSingleRange(t: SimTarget, region: PhysRegion, ctl: CtlFields = USER, cpu = 0): Promise<void> {
  await t.msrBatch(cpu, [
    { op: 'wrmsr', msr: STATUS, value: 0n },
    { op: 'wrmsr', msr: OUTPUT_BASE, value: region.base },
    { op: 'wrmsr', msr: MASK_PTRS, value: BigInt(region.size - 1) | 0x7fn },
    { op: 'wrmsr', msr: CTL, value: IA32_RTIT_CTL.encode({ ...ctl, ToPA: false, TraceEn: true }) },
  ]).then(mustAllOk);
}

/** A ToPA run: the table, its output regions (4 KiB each). */
export interface TopaRig {
  readonly table: PhysRegion;
  readonly regions: PhysRegion[];
}

/**
 * Builds one table of `n` 4 KiB regions followed by END → the table itself (a ring), INT on the
 * entries in `ints`, STOP on those in `stops` (docs/sdm/output.md §4.2), then programs and enables.
 */
export async function programTopa(
  t: SimTarget, n: number, o: { ints?: number[]; stops?: number[]; ctl?: CtlFields; cpu?: number } = {},
): Promise<TopaRig> {
  const table = await t.phys.alloc(4096, 4096);
  const regions: PhysRegion[] = [];
  for (let i = 0; i < n; i++) regions.push(await t.phys.alloc(4096, 4096));
  const entries = regions.map((r, i) => topaEntry({ base: r.base, size: 4096, int: o.ints?.includes(i) ?? false, stop: o.stops?.includes(i) ?? false }));
  entries.push(topaEntry({ base: table.base, end: true }));
  await writeU64(t, table.base, entries);
  await t.msrBatch(o.cpu ?? 0, [
    { op: 'wrmsr', msr: STATUS, value: 0n },
    { op: 'wrmsr', msr: OUTPUT_BASE, value: table.base },
    { op: 'wrmsr', msr: MASK_PTRS, value: 0x7fn },
    { op: 'wrmsr', msr: CTL, value: IA32_RTIT_CTL.encode({ ...(o.ctl ?? USER), ToPA: true, TraceEn: true }) },
  ]).then(mustAllOk);
  await t.pmiEnable(o.cpu ?? 0);
  return { table, regions };
}

function mustAllOk(rs: readonly { ok: boolean }[]): void {
  const bad = rs.find((r) => !r.ok);
  if (bad) throw new Error(`MSR write faulted: ${JSON.stringify(bad, (_k, v: unknown) => (typeof v === 'bigint' ? `0x${v.toString(16)}` : v))}`);
}

/** Runs the workload to its end; `onEvent` runs for every event while the model is stopped. Returns the events. */
export async function runToExit(
  t: SimTarget, w: GeneratedWorkload, onEvent: (e: TargetEvent) => Promise<void> | void = () => undefined,
  o: { sliceBranches?: number; cpu?: number } = {},
): Promise<TargetEvent[]> {
  const seen: TargetEvent[] = [];
  await using ex = t.start(w, o.cpu ?? 0, o.sliceBranches !== undefined ? { sliceBranches: o.sliceBranches } : {});
  for await (const e of ex.events) {
    seen.push(e);
    await onEvent(e);
  }
  return seen;
}

/** Clears TraceEn (keeping the rest of CTL); returns STATUS and OUTPUT_MASK_PTRS read after. */
export async function disable(t: SimTarget, cpu = 0): Promise<{ status: bigint; maskPtrs: bigint; base: bigint }> {
  const ctl = await t.rdmsr(cpu, CTL);
  await t.wrmsr(cpu, CTL, ctl & ~1n);
  return { status: await t.rdmsr(cpu, STATUS), maskPtrs: await t.rdmsr(cpu, MASK_PTRS), base: await t.rdmsr(cpu, OUTPUT_BASE) };
}

/** A single-range run from enable to exit: the bytes in memory (no wrap: the region must be big enough). */
export async function singleRangeRun(
  t: SimTarget, w: GeneratedWorkload, o: { ctl?: CtlFields; size?: number; sliceBranches?: number } = {},
): Promise<{ bytes: Uint8Array; events: TargetEvent[]; status: bigint }> {
  const size = o.size ?? 1 << 20;
  const region = await t.phys.alloc(size, size);
  await programSingleRange(t, region, o.ctl ?? USER);
  const events = await runToExit(t, w, undefined, o.sliceBranches !== undefined ? { sliceBranches: o.sliceBranches } : {});
  const { status, maskPtrs } = await disable(t);
  const offset = Number(maskPtrs >> 32n);
  return { bytes: await t.phys.read(region.base, offset), events, status };
}

/** Our decoder's packet type names; decode errors as "error:<offset>". */
export function packetTypes(bytes: Uint8Array): string[] {
  const d = new PacketDecoder(bytes);
  const out: string[] = [];
  while (d.next()) {
    const r = d.record;
    out.push(r.error !== 0 || r.kind === 0 ? `error:${r.offset}` : packetName(r.kind));
  }
  return out;
}
