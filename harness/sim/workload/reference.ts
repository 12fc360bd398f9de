// A slow, plain reference interpretation of a WorkloadModel's IR: objects, bigint IPs, a Map
// from IP to instruction, a JS array for the stack. Tests compare PathCursor (the fast,
// allocation-free path generator) against it event by event.
import type { WorkloadModel } from './model.js';
import * as O from './ops.js';

/** One executed branch as the reference interpreter sees it. */
export interface RefBranch {
  readonly ip: bigint;
  readonly kind: O.FlowKind;
  readonly taken?: boolean;
  /** Absent for the exit SYSCALL. */
  readonly to?: bigint;
  readonly indirect: boolean;
  readonly zeroLength: boolean;
  readonly retMatched: boolean;
}

interface Insn {
  readonly op: number;
  readonly a: number;
  readonly b: number;
  readonly c: number;
  readonly ip: bigint;
  readonly next: bigint;
}

/** Yields the model's path, branch by branch, by straightforward interpretation. */
export function* referencePath(model: WorkloadModel, limit = Infinity): Generator<RefBranch> {
  const insns: Insn[] = [];
  for (let r = 0; r < model.code.length; r += O.ROW) {
    const ip = model.base + BigInt(model.code[r + O.F_OFF]!);
    insns.push({
      op: model.code[r + O.F_OP]!, a: model.code[r + O.F_A]!, b: model.code[r + O.F_B]!, c: model.code[r + O.F_C]!,
      ip, next: ip + BigInt(model.code[r + O.F_LEN]!),
    });
  }
  // Execution resumes at the first modelled instruction at or after an address.
  const find = (ip: bigint): number => {
    const i = insns.findIndex((x) => x.ip >= ip);
    if (i < 0) throw new Error(`no code at 0x${ip.toString(16)}`);
    return i;
  };
  const byte = (off: number): number => {
    const v = model.image[off];
    if (v === undefined) throw new Error('read outside the image');
    return v;
  };
  const qword = (off: number): bigint => {
    let v = 0n;
    for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(byte(off + i));
    return v;
  };
  const regs = new Array<number>(16).fill(0);
  const stack: { value: bigint; pushedByCall: bigint | null }[] = [];
  let flags = 0;
  let pc = find(model.base + BigInt(model.entryOffset));
  for (let n = 0; n < limit; ) {
    const x = insns[pc];
    if (x === undefined) throw new Error('ran off the end of the code');
    const abs = (off: number): bigint => model.base + BigInt(off);
    let goTo: bigint | null = null;
    let ev: RefBranch | null = null;
    switch (x.op) {
      case O.OP_SET: regs[x.a] = x.b; break;
      case O.OP_MOV: regs[x.a] = regs[x.b]!; break;
      case O.OP_DEC: regs[x.a] = regs[x.a]! - 1; flags = regs[x.a]!; break;
      case O.OP_INC: regs[x.a] = regs[x.a]! + 1; flags = regs[x.a]!; break;
      case O.OP_AND: regs[x.a] = regs[x.a]! & x.b; flags = regs[x.a]!; break;
      case O.OP_CMP: flags = regs[x.a]! - x.b; break;
      case O.OP_TEST: flags = regs[x.a]! & x.b; break;
      case O.OP_LDB: regs[x.a] = byte(x.b + regs[x.c]!); break;
      case O.OP_POP: stack.pop(); break;
      case O.OP_PUSH: stack.push({ value: abs(x.b), pushedByCall: null }); break;
      case O.OP_RETADD: stack[stack.length - 1]!.value += BigInt(x.b); break;
      case O.OP_MOVA: regs[x.a] = x.b; break;
      case O.OP_JCC:
      case O.OP_LOOP: {
        let taken: boolean;
        if (x.op === O.OP_LOOP) {
          regs[1] = regs[1]! - 1;
          taken = regs[1] !== 0;
        } else {
          const cond = [flags === 0, flags !== 0, flags < 0, flags >= 0, flags <= 0, flags > 0][x.a];
          if (cond === undefined) throw new Error(`bad condition ${x.a}`);
          taken = cond;
        }
        goTo = taken ? abs(x.b) : x.next;
        ev = { ip: x.ip, kind: 'jcc', taken, to: goTo, indirect: false, zeroLength: false, retMatched: false };
        break;
      }
      case O.OP_JMP:
      case O.OP_JMPT:
      case O.OP_JMPR:
      case O.OP_CALL:
      case O.OP_CALLT:
      case O.OP_CALLR: {
        const isCall = x.op === O.OP_CALL || x.op === O.OP_CALLT || x.op === O.OP_CALLR;
        if (x.op === O.OP_JMP || x.op === O.OP_CALL) goTo = abs(x.b);
        else if (x.op === O.OP_JMPR || x.op === O.OP_CALLR) goTo = abs(regs[x.a]!);
        else goTo = qword(x.b + 8 * regs[x.c]!);
        if (isCall) stack.push({ value: x.next, pushedByCall: x.next });
        ev = {
          ip: x.ip, kind: isCall ? 'call' : 'jmp', to: goTo,
          indirect: x.op !== O.OP_JMP && x.op !== O.OP_CALL,
          zeroLength: x.op === O.OP_CALL && goTo === x.next, retMatched: false,
        };
        break;
      }
      case O.OP_RET: {
        const top = stack.pop();
        if (top === undefined) throw new Error('ret with an empty stack');
        goTo = top.value;
        ev = { ip: x.ip, kind: 'ret', to: goTo, indirect: false, zeroLength: false, retMatched: top.pushedByCall === top.value };
        break;
      }
      case O.OP_EXIT:
        yield { ip: x.ip, kind: 'far.call', indirect: false, zeroLength: false, retMatched: false };
        return;
      default:
        throw new Error(`bad op ${x.op}`);
    }
    if (ev !== null) {
      yield ev;
      n++;
      pc = find(goTo as bigint);
    } else {
      pc++;
    }
  }
}
