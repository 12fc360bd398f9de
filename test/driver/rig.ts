// A driver test rig over the real model: SimTarget (recorded), with the
// model's ToPA/single-range output engine attached to CPU 0. Bytes fed to the
// engine stand in for the packet generator; a delivered PMI becomes a `pmi`
// event as a top half that did nothing would report it.
import { OutputUnit } from '../../harness/sim/output/output-unit.js';
import type { TopaOptions } from '../../harness/sim/output/topa.js';
import { SimTarget } from '../../harness/sim/sim-target.js';
import type { CpuProfile, ProfileName } from '../../harness/sim/profiles.js';
import type { PmiEvent } from '../../driver/pmi/handler.js';
import { RecordingTarget } from '../../harness/rundir/recording-target.js';
import type { TraceSession } from '../../driver/session.js';

/** ToPA entry bits from docs/sdm/output.md §4.2, by hand. */
export const END = 0x1n, INT = 0x4n, STOP = 0x10n;

export interface Rig {
  sim: SimTarget;
  target: RecordingTarget;
  out: OutputUnit;
  /** PMIs delivered and not yet handled. */
  pending: PmiEvent[];
  /** Every byte fed so far (what the "CPU" generated). */
  fed: number[];
}

/** A recorded SimTarget with its output engine on CPU 0. */
export async function rig(profile: ProfileName | CpuProfile, o: { topa?: TopaOptions; maxContiguous?: number } = {}): Promise<Rig> {
  const sim = await SimTarget.create({ profile, memory: { ramSize: 64 * 2 ** 20, maxContiguous: o.maxContiguous ?? 2 ** 20 } });
  const f = sim.unit(0);
  const out = new OutputUnit(f, sim.phys, o.topa, sim.guardOf(0));
  const r: Rig = { sim, target: new RecordingTarget(sim, () => 0), out, pending: [], fed: [] };
  f.onPmi = () => r.pending.push({ kind: 'pmi', cpu: 0, globalStatus: f.globalStatus, ctl: f.ctl, status: f.status, acked: false, traceEnCleared: false });
  return r;
}

/** Deterministic non-zero bytes with no PSB pattern. */
export function pattern(n: number, from = 0): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => ((from + i) % 251) + 3);
}

/** Feeds `n` bytes in `chunk`-byte steps; after each step, delivered PMIs go to the session (skid ≤ chunk). */
export async function pump(r: Rig, s: TraceSession | undefined, n: number, chunk = 512): Promise<void> {
  for (let done = 0; done < n; done += chunk) {
    const b = pattern(Math.min(chunk, n - done), r.fed.length);
    const before = r.out.written;
    await r.out.writeBytes(b);
    r.fed.push(...b.subarray(0, r.out.written - before));
    while (s && r.pending.length) await s.onEvent(r.pending.shift()!);
  }
}

/** The lines of the transcript as "op msr" strings, e.g. "wrmsr 0x570". */
export function ops(r: Rig, from = 0): string[] {
  return r.target.lines.slice(from).map((l) => `${l.op}${l.msr ? ` ${l.msr}` : ''}`);
}

/** 64-bit entries of a ToPA table in memory. */
export async function entries(r: Rig, base: bigint, n: number): Promise<bigint[]> {
  const b = await r.sim.phys.read(base, n * 8);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return Array.from({ length: n }, (_, i) => dv.getBigUint64(i * 8, true));
}
