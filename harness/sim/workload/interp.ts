// IrCursor: the interpreter over a model's IR (ops.ts). It produces the executed path branch by
// branch; WorkloadModel runs it once and keeps the result packed for fast replay (PathCursor).
import { BranchState } from './branch-state.js';
import type { WorkloadModel } from './model.js';
import {
  COND_G, COND_GE, COND_L, COND_LE, COND_NZ, COND_Z, F_A, F_B, F_C, F_LEN, F_OFF, K_JCC,
  OP_AND, OP_CALL, OP_CALLR, OP_CALLT, OP_CMP, OP_DEC, OP_EXIT, OP_FIRST_BRANCH, OP_INC, OP_JCC, OP_JMP,
  OP_JMPR, OP_JMPT, OP_LDB, OP_LOOP, OP_MOV, OP_MOVA, OP_POP, OP_PUSH, OP_RET, OP_RETADD, OP_SET, OP_TEST, ROW,
} from './ops.js';

/** Deepest call/push stack the model tracks (the generator stays far below). */
export const MAX_STACK = 1024;

/** A typed failure of the model: the IR asked for something the image does not contain. */
export class WorkloadModelError extends Error {
  override readonly name = 'WorkloadModelError';
}

/**
 * A resumable, allocation-free interpretation of the IR. Each `next()` runs the IR up to and
 * including the next branch and fills the public fields; it returns false after the exit.
 * IPs are numbers (absolute linear addresses; exact below 2^53).
 */
export class IrCursor extends BranchState {
  /** True once the exit has retired. */
  done = false;

  private pc: number;
  private res = 0;
  private sp = 0;
  private readonly regs = new Int32Array(16);
  private readonly stack = new Int32Array(MAX_STACK);
  private readonly orig = new Int32Array(MAX_STACK);
  private readonly code: Int32Array;
  private readonly opAt: Int32Array;
  private readonly kinds: Int8Array;
  private readonly image: Uint8Array;
  private readonly view: DataView;
  private readonly base: number;
  private readonly targetRow: Int32Array;

  constructor(model: WorkloadModel) {
    super();
    this.code = model.code;
    this.opAt = model.opAt;
    this.kinds = model.rowKind;
    this.targetRow = model.targetRow;
    this.image = model.image;
    this.view = new DataView(model.image.buffer, model.image.byteOffset, model.image.byteLength);
    this.base = model.baseIp;
    this.pc = this.rowAt(model.entryOffset);
  }

  private rowAt(off: number): number {
    const r = off >= 0 && off < this.opAt.length ? this.opAt[off]! : -1;
    if (r < 0) throw new WorkloadModelError(`no code at offset 0x${off.toString(16)}`);
    return r;
  }

  private qword(off: number): number {
    if (off < 0 || off + 8 > this.image.length) throw new WorkloadModelError(`table read outside the image at 0x${off.toString(16)}`);
    return this.view.getUint32(off, true) + this.view.getUint32(off + 4, true) * 0x1_0000_0000 - this.base;
  }

  private byte(off: number): number {
    if (off < 0 || off >= this.image.length) throw new WorkloadModelError('byte table read outside the image');
    return this.image[off]!;
  }

  private pushRet(value: number, orig: number): void {
    if (this.sp >= MAX_STACK) throw new WorkloadModelError('model stack overflow');
    this.stack[this.sp] = value;
    this.orig[this.sp] = orig;
    this.sp++;
  }

  /** Advances to the next branch; false when the path has ended. */
  next(): boolean {
    if (this.done) return false;
    const code = this.code;
    const regs = this.regs;
    const stack = this.stack;
    let pc = this.pc;
    let res = this.res;
    for (;;) {
      const r = pc * ROW;
      const op = code[r]!;
      if (op < OP_FIRST_BRANCH) {
        const a = code[r + F_A]!;
        const b = code[r + F_B]!;
        switch (op) {
          case OP_SET: regs[a] = b; break;
          case OP_MOV: regs[a] = regs[b]!; break;
          case OP_DEC: res = regs[a] = regs[a]! - 1; break;
          case OP_INC: res = regs[a] = regs[a]! + 1; break;
          case OP_AND: res = regs[a] = regs[a]! & b; break;
          case OP_CMP: res = regs[a]! - b; break;
          case OP_TEST: res = regs[a]! & b; break;
          case OP_LDB: regs[a] = this.byte(b + regs[code[r + F_C]!]!); break;
          case OP_POP:
            if (this.sp === 0) throw new WorkloadModelError('pop from an empty stack');
            this.sp--;
            break;
          case OP_PUSH: this.pushRet(b, -1); break;
          case OP_RETADD:
            if (this.sp === 0) throw new WorkloadModelError('return-address edit on an empty stack');
            stack[this.sp - 1] = stack[this.sp - 1]! + b;
            break;
          case OP_MOVA: regs[a] = b; break;
          default: throw new WorkloadModelError(`bad IR op ${op} at row ${pc}`);
        }
        pc++;
        continue;
      }
      // A branch: fill the event.
      const off = code[r + F_OFF]!;
      const next = off + code[r + F_LEN]!;
      let to = next;
      let toRow = pc + 1;
      let taken = false;
      let matched = false;
      let indirect = false;
      switch (op) {
        case OP_JCC: {
          switch (code[r + F_A]) {
            case COND_Z: taken = res === 0; break;
            case COND_NZ: taken = res !== 0; break;
            case COND_L: taken = res < 0; break;
            case COND_GE: taken = res >= 0; break;
            case COND_LE: taken = res <= 0; break;
            case COND_G: taken = res > 0; break;
            default: throw new WorkloadModelError(`bad condition at row ${pc}`);
          }
          if (taken) {
            to = code[r + F_B]!;
            toRow = this.targetRow[pc]!;
          }
          break;
        }
        case OP_LOOP:
          // SDM Vol. 2A "LOOP/LOOPcc": RCX is decremented first, flags are not changed.
          taken = (regs[1] = regs[1]! - 1) !== 0;
          if (taken) {
            to = code[r + F_B]!;
            toRow = this.targetRow[pc]!;
          }
          break;
        case OP_JMP:
          to = code[r + F_B]!;
          toRow = this.targetRow[pc]!;
          break;
        case OP_CALL:
          this.pushRet(next, next);
          to = code[r + F_B]!;
          toRow = this.targetRow[pc]!;
          break;
        case OP_JMPT:
        case OP_CALLT:
          to = this.qword(code[r + F_B]! + 8 * regs[code[r + F_C]!]!);
          if (op === OP_CALLT) this.pushRet(next, next);
          toRow = this.rowAt(to);
          indirect = true;
          break;
        case OP_JMPR:
        case OP_CALLR:
          to = regs[code[r + F_A]!]!;
          if (op === OP_CALLR) this.pushRet(next, next);
          toRow = this.rowAt(to);
          indirect = true;
          break;
        case OP_RET: {
          if (this.sp === 0) throw new WorkloadModelError('ret with an empty stack');
          const sp = --this.sp;
          to = stack[sp]!;
          matched = this.orig[sp] === to;
          toRow = this.rowAt(to);
          break;
        }
        case OP_EXIT:
          this.done = true;
          break;
        default: throw new WorkloadModelError(`bad IR op ${op} at row ${pc}`);
      }
      const base = this.base;
      this.index++;
      this.kind = this.kinds[pc]!;
      this.site = pc;
      this.ip = base + off;
      this.nextIp = base + next;
      this.to = this.done ? -1 : base + to;
      this.taken = taken;
      this.zeroLength = op === OP_CALL && to === next;
      this.retMatched = matched;
      this.indirect = indirect;
      this.pc = toRow;
      this.res = res;
      return true;
    }
  }

  /** True when the current branch is a Jcc/LOOP (has a `taken` outcome). */
  get isConditional(): boolean {
    return this.kind === K_JCC;
  }
}
