// The packed form of a WorkloadModel's path and branch sites that the packet
// generator replays (trace/packed-path.ts), built once per model: per landing
// offset the next branch site and the instructions before it, per site its
// class, Next IP and static target.
import { B_CALL, B_CALL_IND, B_CALL_ZERO, B_JCC, B_JMP, B_JMP_IND, B_OTHER, B_RET, type PackedPath } from '../trace/packed-path.js';
import { PATH_OFFSET, PATH_TAKEN, type WorkloadModel } from '../workload/model.js';
import {
  F_B, F_LEN, F_OFF, F_OP, OP_CALL, OP_CALLR, OP_CALLT, OP_JCC, OP_JMP, OP_JMPR, OP_JMPT, OP_LOOP, OP_RET, ROW,
} from '../workload/ops.js';

const cache = new WeakMap<WorkloadModel, PackedPath>();

/** The packed path and site tables of `model` (computed once, then shared by every run of it). */
export function packedPath(model: WorkloadModel): PackedPath {
  let p = cache.get(model);
  if (p === undefined) {
    p = build(model);
    cache.set(model, p);
  }
  return p;
}

function classOf(op: number, next: number, target: number): number {
  switch (op) {
    case OP_JCC: case OP_LOOP: return B_JCC;
    case OP_JMP: return B_JMP;
    case OP_CALL: return target === next ? B_CALL_ZERO : B_CALL;   // E8 00000000 (docs/sdm/packets.md §7)
    case OP_JMPT: case OP_JMPR: return B_JMP_IND;
    case OP_CALLT: case OP_CALLR: return B_CALL_IND;
    case OP_RET: return B_RET;
    default: return B_OTHER;   // the exit SYSCALL (a far transfer) and non-branch rows
  }
}

function build(model: WorkloadModel): PackedPath {
  const code = model.code;
  const rows = code.length / ROW;
  // Site `rows` is a sentinel (landing past the last row): class B_OTHER.
  const siteClass = new Uint8Array(rows + 1).fill(B_OTHER);
  const siteOff = new Int32Array(rows + 1);
  const siteNext = new Int32Array(rows + 1);
  const siteTarget = new Int32Array(rows + 1).fill(-1);
  for (let r = 0; r < rows; r++) {
    const op = code[r * ROW + F_OP]!;
    const off = code[r * ROW + F_OFF]!;
    const next = off + code[r * ROW + F_LEN]!;
    const direct = op === OP_JCC || op === OP_LOOP || op === OP_JMP || op === OP_CALL;
    siteOff[r] = off;
    siteNext[r] = next;
    if (direct) siteTarget[r] = code[r * ROW + F_B]!;
    siteClass[r] = classOf(op, next, direct ? code[r * ROW + F_B]! : -1);
  }
  const n = model.opAt.length;
  const siteAt = new Int32Array(n);
  const insnsAt = new Int32Array(n);
  const landing = new Int32Array(2 * n);
  for (let off = 0; off < n; off++) {
    const first = model.opAt[off]!;
    const site = first < 0 ? rows : model.nextBranchRow[first]!;
    siteAt[off] = site;
    insnsAt[off] = first < 0 ? 0 : site - first;
    if (insnsAt[off]! >= 2 ** 28) throw new RangeError('packed path: too many instructions before a branch');
    landing[2 * off] = insnsAt[off]! * 8 + siteClass[site]!;
    landing[2 * off + 1] = siteNext[site]!;
  }
  return {
    base: model.baseIp, path: model.path, offsetMask: PATH_OFFSET, takenMask: PATH_TAKEN,
    siteAt, landing, insnsAt, siteClass, siteOff, siteNext, siteTarget,
  };
}
