// Small readers scenarios share: packet statistics of a stream, truth.jsonl
// records, transcript lookups, and the standard requests.
import { PacketDecoder } from '../../../driver/decode/decoder.js';
import { packetName } from '../../../driver/decode/record.js';
import type { TopaPolicy, TraceOptions, TraceRequest } from '../../../driver/request.js';
import type { PtCaps } from '../../../driver/hw/cpuid.js';
import type { TranscriptLine } from '../../rundir/transcript-line.js';
import { K_JCC, type GeneratedWorkload } from '../../sim/workload/index.js';

/** Packet counts by type name, TNT bits, decode errors and PSB offsets of a stream. */
export interface PacketStats {
  readonly count: Readonly<Record<string, number>>;
  readonly tntBits: number;
  readonly errors: number;
  readonly psbOffsets: readonly number[];
  readonly total: number;
}

/** The offset of the first PSB (docs/sdm/packets.md §3.14: 02 82 × 8), or −1. */
export function firstPsb(b: Uint8Array): number {
  outer: for (let i = 0; i + 16 <= b.length; i++) {
    for (let k = 0; k < 16; k += 2) if (b[i + k] !== 0x02 || b[i + k + 1] !== 0x82) continue outer;
    return i;
  }
  return -1;
}

/** Decodes `bytes` from its first PSB and counts packets. */
export function packetStats(bytes: Uint8Array): PacketStats {
  const count: Record<string, number> = {};
  const psbOffsets: number[] = [];
  let tntBits = 0, errors = 0, total = 0;
  const start = firstPsb(bytes);
  if (start >= 0) {
    const d = new PacketDecoder(bytes.subarray(start));
    while (d.next()) {
      const r = d.record;
      if (r.error !== 0 || r.kind === 0) { errors++; continue; }
      const name = packetName(r.kind);
      count[name] = (count[name] ?? 0) + 1;
      total++;
      if (name === 'tnt.8' || name === 'tnt.64') tntBits += r.n;
      if (name === 'psb') psbOffsets.push(start + r.offset);
    }
  }
  return { count, tntBits, errors, psbOffsets, total };
}

/** One truth/flow record, parsed. */
export interface FlowRec {
  readonly kind: string;
  readonly ip?: string;
  readonly to?: string;
  readonly taken?: boolean;
  readonly from?: string;
}

/** Parses flow-json lines. */
export function records(lines: readonly string[]): FlowRec[] {
  return lines.map((l) => JSON.parse(l) as FlowRec);
}

/** Branch records only (they carry `ip` before `kind`: docs/formats/flow-json.md). */
export function branchRecords(lines: readonly string[]): FlowRec[] {
  return lines.filter((l) => l.startsWith('{"ip"')).map((l) => JSON.parse(l) as FlowRec);
}

/** The transcript lines of `op` on `msr` (hex as in the transcript). */
export function linesOf(lines: readonly TranscriptLine[], op: TranscriptLine['op'], msr?: number): TranscriptLine[] {
  const m = msr === undefined ? undefined : `0x${msr.toString(16)}`;
  return lines.filter((l) => l.op === op && (m === undefined || l.msr === m));
}

/**
 * True when every PMI of a run was handled with tracing on, or settled at the final stop (an INT
 * region that filled just before the final disable: PmiHandler.settleAtStop). The one exception is
 * the run's first PMI when it is not a ToPA PMI: a PMI already in flight when the previous run's
 * final stop acknowledged GLOBAL_STATUS[55] is still delivered (an interrupt is not recalled), at
 * the next enable, with [55] clear, and the handler rightly leaves it alone.
 */
export function everyPmiHandled(pmis: readonly { readonly action: string }[]): boolean {
  return pmis.every((p, i) => p.action === 'handled' || p.action === 'handled-saved' || p.action === 'final-stop' || (i === 0 && p.action === 'not-topa'));
}

/** Default workload size: small, so the whole suite stays fast. */
export const DEFAULT_BRANCHES = 12_000;

/** A ToPA request of `regions` 4 KiB regions with `policy`. */
export function topa(policy: TopaPolicy, regions = 3, extra: TraceOptions = {}): TraceRequest {
  return { output: { scheme: 'topa', policy, regionSize: 4096, regions }, ...extra };
}

/** A single-range request of `size` bytes. */
export function singleRange(size = 1 << 20, extra: TraceOptions = {}): TraceRequest {
  return { output: { scheme: 'single-range', size }, ...extra };
}

/**
 * The request that works on every profile: ToPA single-entry on MENTRY=0 CPUs, else grow. On
 * MENTRY=0 the one region holds the whole trace of `w` (default: a workload of DEFAULT_BRANCHES)
 * without a PMI (docs/sdm/output.md §4.6): 8 bytes per branch, at least 64 KiB, a power of two.
 */
export function anyOutput(mentry: boolean, extra: TraceOptions = {}, w?: GeneratedWorkload): TraceRequest {
  if (mentry) return topa('grow', 3, extra);
  const branches = w?.model.branchCount ?? DEFAULT_BRANCHES;
  let regionSize = 65536;
  while (regionSize < branches * 8) regionSize *= 2;
  return { output: { scheme: 'topa', policy: 'single-entry', regionSize, regions: 1 }, ...extra };
}

/** The kernel half of the canonical address space starts here (48-bit): IPs at or above are CPL 0 code. */
export const KERNEL_HALF = 0xffff_8000_0000_0000n;

/**
 * Timing packets at their densest encodings the CPU enumerates (TSC, MTC every ART tick, CYC with
 * no threshold: docs/sdm/msrs.md §3.2), to make many output bytes from a short workload. Empty when
 * the CPU has neither MTC nor CYC.
 */
export function timingVolume(caps: PtCaps): TraceOptions {
  const mtc = caps.mtc && (caps.mtcPeriods & 1) !== 0;
  const cyc = caps.psbCyc && (caps.cycThresholds & 1) !== 0;
  return { ...(mtc ? { TSCEn: true, MTCFreq: 0 } : {}), ...(cyc ? { CycThresh: 0 } : {}) };
}

/**
 * The distinct addresses the taken branches of `w`'s path jump to, ascending (from its model,
 * known on every target; the exit is left out: it leaves the workload).
 */
export function takenBranchTargets(w: GeneratedWorkload): number[] {
  const to = new Set<number>();
  w.model.forEachBranch((c) => { if (c.to >= 0 && (c.kind !== K_JCC || c.taken)) to.add(c.to); });
  return [...to].sort((x, y) => x - y);
}

/** True when `w`'s path executes an indirect JMP or CALL: a TIP packet whatever TNT and RET compression do. */
export function executesIndirect(w: GeneratedWorkload): boolean {
  let found = false;
  w.model.forEachBranch((c) => { found ||= c.indirect; });
  return found;
}
