// WorkloadModel: what the simulated CPU needs to run a workload without interpreting x86 — the
// branch instructions of the image (ip, length, kind, static target), the compact IR (ops.ts)
// that the interpreter (interp.ts) runs once to record the executed path, and PathCursor, the
// fast allocation-free replay of that packed path.
import type { Annotation } from './annotations.js';
import { BranchState } from './branch-state.js';
import { IrCursor, WorkloadModelError } from './interp.js';
import {
  F_B, F_LEN, F_OFF, F_OP, KIND_NAMES, OP_CALL, OP_CALLR, OP_CALLT, OP_FIRST_BRANCH, OP_JCC, OP_JMP, OP_JMPR,
  OP_JMPT, OP_LOOP, ROW, type FlowKind, isIndirectOp, kindOfOp,
} from './ops.js';

export { MAX_STACK, WorkloadModelError } from './interp.js';

/** One branch instruction of the image (the static control-flow facts). */
export interface BranchSite {
  readonly ip: bigint;
  readonly length: number;
  readonly kind: FlowKind;
  /** Near JMP/CALL r/m (docs/sdm/README.md §1 "Indirect"); RET and SYSCALL are not. */
  readonly indirect: boolean;
  /** The target encoded in the instruction (direct Jcc/LOOP/JMP/CALL). */
  readonly target?: bigint;
  /** `E8 00000000`: a direct CALL to its own Next IP (docs/sdm/packets.md §7: never pushed). */
  readonly zeroLength: boolean;
}

/** The per-branch visitor of `forEachBranch`; `e` is reused: copy what you keep. */
export type BranchVisitor = (e: PathCursor) => void;

/** The control-flow model of one generated workload. */
export class WorkloadModel {
  /** Offset → index of the first IR row at or after that offset (−1 past the last row). */
  readonly opAt: Int32Array;
  /** Per IR row: the row a direct branch goes to when taken (−1 for other rows). */
  readonly targetRow: Int32Array;
  /** Per IR row: K_* kind of a branch (−1 for non-branch rows). */
  readonly rowKind: Int8Array;
  readonly baseIp: number;
  private packed: Int32Array | null = null;
  /** Per IR row: the first branch row at or after it (rows = no branch left). */
  readonly nextBranchRow: Int32Array;

  constructor(
    readonly base: bigint,
    readonly image: Uint8Array,
    readonly entryOffset: number,
    /** IR rows (ops.ts). */
    readonly code: Int32Array,
    /** Model-only events by branch index (annotations.ts), sorted by `at`. */
    readonly annotations: readonly Annotation[] = [],
    /** Offset where data starts: [0, codeEnd) is a sequence of instructions. */
    readonly codeEnd: number = image.length,
  ) {
    if (base + BigInt(image.length) > BigInt(Number.MAX_SAFE_INTEGER)) throw new WorkloadModelError('base too high for number IPs');
    this.baseIp = Number(base);
    this.opAt = new Int32Array(image.length + 1).fill(-1);
    // Rows are in address order: walking offsets downwards, the last row seen is the first one at or after o.
    let r = code.length / ROW - 1;
    let first = -1;
    for (let o = image.length; o >= 0; o--) {
      while (r >= 0 && code[r * ROW + F_OFF]! >= o) first = r--;
      this.opAt[o] = first;
    }
    const rows = code.length / ROW;
    this.nextBranchRow = new Int32Array(rows + 1).fill(rows);
    for (let i = rows - 1; i >= 0; i--) {
      this.nextBranchRow[i] = code[i * ROW + F_OP]! >= OP_FIRST_BRANCH ? i : this.nextBranchRow[i + 1]!;
    }
    this.targetRow = new Int32Array(rows).fill(-1);
    this.rowKind = new Int8Array(rows).fill(-1);
    for (let i = 0; i < rows; i++) {
      const op = code[i * ROW + F_OP]!;
      if (op < OP_FIRST_BRANCH) continue;
      this.rowKind[i] = kindOfOp(op);
      if (op === OP_JCC || op === OP_LOOP || op === OP_JMP || op === OP_CALL) {
        const t = code[i * ROW + F_B]!;
        const row = t >= 0 && t < this.opAt.length ? this.opAt[t]! : -1;
        if (row < 0) throw new WorkloadModelError(`branch at 0x${code[i * ROW + F_OFF]!.toString(16)} targets no code`);
        this.targetRow[i] = row;
      }
    }
  }

  /** A fresh cursor at the entry point. */
  cursor(): PathCursor {
    return new PathCursor(this);
  }

  /** Calls `visit` for every branch of the path, in order; returns the branch count. */
  forEachBranch(visit: BranchVisitor): number {
    const c = new PathCursor(this);
    while (c.next()) visit(c);
    return c.index + 1;
  }

  /** Total branches on the path, the exit SYSCALL included (computed once). */
  get branchCount(): number {
    return this.path.length;
  }

  /**
   * The executed path, packed: one Int32 per branch, the offset of its `to` from the base
   * (−1 for the exit), with PATH_MATCHED for a matched RET and PATH_TAKEN for a taken Jcc/LOOP. Computed once by the IR interpreter
   * (interp.ts); 4 bytes per branch.
   */
  get path(): Int32Array {
    if (this.packed === null) this.packed = recordPath(this);
    return this.packed;
  }

  /** Every branch instruction in the image, in address order. */
  sites(): BranchSite[] {
    const out: BranchSite[] = [];
    for (let r = 0; r < this.code.length; r += ROW) {
      const op = this.code[r + F_OP]!;
      if (op < OP_FIRST_BRANCH) continue;
      const off = this.code[r + F_OFF]!;
      const len = this.code[r + F_LEN]!;
      const direct = op === OP_JCC || op === OP_LOOP || op === OP_JMP || op === OP_CALL;
      const site: BranchSite = {
        ip: this.base + BigInt(off),
        length: len,
        kind: KIND_NAMES[kindOfOp(op)] as FlowKind,
        indirect: isIndirectOp(op),
        zeroLength: op === OP_CALL && this.code[r + F_B] === off + len,
        ...(direct ? { target: this.base + BigInt(this.code[r + F_B]!) } : {}),
      };
      out.push(site);
    }
    return out;
  }
}

/** The fields of one retired branch, shared by PathCursor and IrCursor (reused objects: copy what you keep). */
export interface BranchEvent {
  /** Index of the branch on the path (0-based). */
  readonly index: number;
  /** IP of the branch instruction. */
  readonly ip: number;
  /** K_* kind (ops.ts); `KIND_NAMES[kind]` is the flow-json spelling. */
  readonly kind: number;
  /** Jcc/LOOP only: the branch was taken. */
  readonly taken: boolean;
  /** IP of the next instruction executed; −1 when it is outside the workload (the exit SYSCALL). */
  readonly to: number;
  /** IP of the instruction after the branch (ip + length). */
  readonly nextIp: number;
  /** Near JMP/CALL r/m (docs/sdm/README.md §1 "Indirect"). */
  readonly indirect: boolean;
  /** A zero-length CALL (`E8 00000000`: docs/sdm/packets.md §7, never pushed on the RET-compression stack). */
  readonly zeroLength: boolean;
  /** RET only: the target is the Next IP its CALL pushed (else the return address was edited). */
  readonly retMatched: boolean;
  /** IR row index of the branch (identifies the site). */
  readonly site: number;
}

/** Bit 30 of a packed path entry: the RET went to its CALL's Next IP. */
export const PATH_MATCHED = 1 << 30;
/** Bit 29 of a packed path entry: the Jcc/LOOP was taken (a taken rel 0 has `to` = Next IP). */
export const PATH_TAKEN = 1 << 29;
/** Low bits of a packed path entry: the `to` offset. */
export const PATH_OFFSET = PATH_TAKEN - 1;

function recordPath(model: WorkloadModel): Int32Array {
  let buf = new Int32Array(1024);
  let n = 0;
  const c = new IrCursor(model);
  while (c.next()) {
    if (n === buf.length) {
      const bigger = new Int32Array(buf.length * 2);
      bigger.set(buf);
      buf = bigger;
    }
    const off = c.to < 0 ? -1 : c.to - model.baseIp;
    if (off > PATH_OFFSET) throw new WorkloadModelError('image too large for a packed path');
    buf[n++] = off < 0 ? -1 : off | (c.retMatched ? PATH_MATCHED : 0) | (c.taken ? PATH_TAKEN : 0);
  }
  return buf.slice(0, n);
}

/**
 * A resumable, allocation-free walk of the executed path (≥ 50 M branches/s): it replays the
 * packed path with per-site tables. `next()` fills the public fields and returns false after
 * the exit. IPs are numbers (absolute linear addresses; exact below 2^53).
 */
export class PathCursor extends BranchState {
  private row: number;
  private readonly path: Int32Array;
  private readonly code: Int32Array;
  private readonly opAt: Int32Array;
  private readonly nbr: Int32Array;
  private readonly kinds: Int8Array;
  private readonly base: number;

  constructor(model: WorkloadModel) {
    super();
    this.path = model.path;
    this.code = model.code;
    this.opAt = model.opAt;
    this.nbr = model.nextBranchRow;
    this.kinds = model.rowKind;
    this.base = model.baseIp;
    this.row = this.nbr[this.opAt[model.entryOffset]!]!;
  }

  /** Advances to the next branch; false when the path has ended. */
  next(): boolean {
    const i = this.index + 1;
    if (i >= this.path.length) return false;
    const e = this.path[i]!;
    const row = this.row;
    const r = row * ROW;
    const code = this.code;
    const op = code[r + F_OP]!;
    const off = code[r + F_OFF]!;
    const next = off + code[r + F_LEN]!;
    const base = this.base;
    this.index = i;
    this.site = row;
    this.kind = this.kinds[row]!;
    this.ip = base + off;
    this.nextIp = base + next;
    if (e < 0) {
      this.to = -1;
      this.taken = false;
      this.retMatched = false;
      this.zeroLength = false;
      this.indirect = false;
      return true;
    }
    const to = e & PATH_OFFSET;
    this.to = base + to;
    this.taken = (e & PATH_TAKEN) !== 0;
    this.retMatched = (e & PATH_MATCHED) !== 0;
    this.zeroLength = op === OP_CALL && to === next;
    this.indirect = op === OP_JMPT || op === OP_CALLT || op === OP_JMPR || op === OP_CALLR;
    this.row = this.nbr[this.opAt[to]!]!;
    return true;
  }
}
