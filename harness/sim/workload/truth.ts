// Flow JSON Lines records (docs/formats/flow-json.md): the formatter the sim reuses for truth.jsonl, and
// the filters-off reference path of a workload (every branch traced, no annotations).
import type { WorkloadModel } from './model.js';
import { K_JCC, KIND_NAMES, type FlowKind } from './ops.js';
import type { PathCursor } from './model.js';

/** An IP or count in flow-json hex: lowercase, `0x`, no leading zeros (docs/formats/packet-json.md). */
export function flowHex(v: number | bigint): string {
  return `0x${v.toString(16)}`;
}

/** A branch record: keys ip, kind, taken (jcc only), to (omitted when the destination is not traced). */
export function branchRecord(ip: number | bigint, kind: FlowKind, taken: boolean | undefined, to: number | bigint | undefined): string {
  const t = kind === 'jcc' ? `,"taken":${taken === true}` : '';
  const d = to === undefined ? '' : `,"to":"${flowHex(to)}"`;
  return `{"ip":"${flowHex(ip)}","kind":"${kind}"${t}${d}}`;
}

/** An async record (interrupt, exception): FUP source and TIP target. */
export function asyncRecord(from: number | bigint, to: number | bigint): string {
  return `{"kind":"async","from":"${flowHex(from)}","to":"${flowHex(to)}"}`;
}

/** An enable record (TIP.PGE at `ip`). */
export function enableRecord(ip: number | bigint): string {
  return `{"kind":"enable","ip":"${flowHex(ip)}"}`;
}

/** A disable record; `ip` absent when the TIP.PGD suppressed it. */
export function disableRecord(ip?: number | bigint): string {
  return ip === undefined ? '{"kind":"disable"}' : `{"kind":"disable","ip":"${flowHex(ip)}"}`;
}

/** An overflow record; `ip` is where tracing resumed, when known. */
export function overflowRecord(ip?: number | bigint): string {
  return ip === undefined ? '{"kind":"overflow"}' : `{"kind":"overflow","ip":"${flowHex(ip)}"}`;
}

/** A gap record (reconstruction only): bytes lost and why. */
export function gapRecord(bytes: number | null, reason: 'stop' | 'wrap' | 'error' | 'ovf'): string {
  return `{"kind":"gap","bytes":${bytes === null ? 'null' : String(bytes)},"reason":"${reason}"}`;
}

/** The branch record of the cursor's current branch (the exit SYSCALL has no `to`: its target is not in the workload). */
export function cursorRecord(c: PathCursor): string {
  return branchRecord(c.ip, KIND_NAMES[c.kind] as FlowKind, c.kind === K_JCC ? c.taken : undefined, c.to < 0 ? undefined : c.to);
}

/**
 * The filters-off reference path: one branch record per executed branch, from the first
 * branch to the exit SYSCALL (`far.call` without `to`, as with User=1, OS=0 the kernel entry is
 * not traced: docs/formats/flow-json.md). No enable/disable records and no annotations: the sim adds those.
 */
export function forEachTruthLine(model: WorkloadModel, write: (line: string) => void): void {
  model.forEachBranch((c) => write(cursorRecord(c)));
}

/** `forEachTruthLine` collected into an array (fine up to a few 100 000 branches). */
export function truthLines(model: WorkloadModel): string[] {
  const out: string[] = [];
  forEachTruthLine(model, (l) => out.push(l));
  return out;
}
