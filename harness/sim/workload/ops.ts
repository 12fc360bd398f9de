// The compact IR of a workload model: one row per x86 instruction whose effect the model needs
// (register updates that feed branch decisions, stack edits, and every branch). Instructions
// without such an effect (NOPs, LEA of a table base, MOV EAX,60 before the exit) have no row.
// A row is ROW consecutive Int32 values: [op, a, b, c, off, len] — `off` is the instruction's
// offset from the image base, `len` its length in bytes.

/** Int32 values per IR row. */
export const ROW = 6;
/** Field positions inside a row. */
export const F_OP = 0, F_A = 1, F_B = 2, F_C = 3, F_OFF = 4, F_LEN = 5;

// Non-branch operations. `res` is the flags source the next Jcc tests (see COND_*).
/** MOV r32, imm32: regs[a] = b. */
export const OP_SET = 1;
/** MOV r32, r32: regs[a] = regs[b]. */
export const OP_MOV = 2;
/** DEC r32: regs[a] -= 1; res = regs[a]. */
export const OP_DEC = 3;
/** INC r32: regs[a] += 1; res = regs[a]. */
export const OP_INC = 4;
/** AND r32, imm: regs[a] &= b; res = regs[a]. */
export const OP_AND = 5;
/** CMP r32, imm: res = regs[a] - b (exact, so signed conditions are exact). */
export const OP_CMP = 6;
/** TEST r32, imm: res = regs[a] & b. */
export const OP_TEST = 7;
/** MOVZX r32, byte [table + regs[c]]: regs[a] = image[b + regs[c]]. */
export const OP_LDB = 8;
/** POP r64: drops the top of the stack. */
export const OP_POP = 9;
/** PUSH imm32 (an address in the image): pushes offset b; it matches no CALL. */
export const OP_PUSH = 10;
/** ADD qword [RSP], imm8: the return address on top of the stack += b. */
export const OP_RETADD = 11;
/** MOV r64, imm64 (an address in the image): regs[a] = offset b. */
export const OP_MOVA = 12;

// Branch operations (op ≥ OP_FIRST_BRANCH): each retires as one branch event.
/** First branch opcode. */
export const OP_FIRST_BRANCH = 16;
/** Jcc: taken to offset b when condition a holds on `res`. */
export const OP_JCC = 16;
/** LOOP: RCX -= 1 (regs[1]); taken to offset b when RCX ≠ 0. */
export const OP_LOOP = 17;
/** JMP rel: to offset b. */
export const OP_JMP = 18;
/** CALL rel: to offset b; a zero-length call when b = off + len. */
export const OP_CALL = 19;
/** JMP qword [table + regs[c]*8]: to the address at table offset b. */
export const OP_JMPT = 20;
/** CALL qword [table + regs[c]*8]. */
export const OP_CALLT = 21;
/** JMP r64: to offset regs[a] (set by OP_MOVA). */
export const OP_JMPR = 22;
/** CALL r64: to offset regs[a]. */
export const OP_CALLR = 23;
/** RET near: to the popped offset. */
export const OP_RET = 24;
/** SYSCALL exit(…): the last event; its destination is outside the workload. */
export const OP_EXIT = 25;

/** Jcc conditions over `res` (x86: Z, NZ, L, GE, LE, G after DEC/INC/AND/TEST/CMP as the generator uses them). */
export const COND_Z = 0, COND_NZ = 1, COND_L = 2, COND_GE = 3, COND_LE = 4, COND_G = 5;

/** Branch kinds in flow-json terms (docs/formats/flow-json.md), as small integers for the hot path. */
export const K_JCC = 0, K_JMP = 1, K_CALL = 2, K_RET = 3, K_FAR_CALL = 4, K_FAR_RET = 5, K_FAR_JMP = 6;
/** flow-json spelling of each K_* value. */
export const KIND_NAMES = ['jcc', 'jmp', 'call', 'ret', 'far.call', 'far.ret', 'far.jmp'] as const;
/** A flow-json branch kind. */
export type FlowKind = (typeof KIND_NAMES)[number];

/** The flow-json kind of a branch opcode. */
export function kindOfOp(op: number): number {
  switch (op) {
    case OP_JCC:
    case OP_LOOP:
      return K_JCC;
    case OP_JMP:
    case OP_JMPT:
    case OP_JMPR:
      return K_JMP;
    case OP_CALL:
    case OP_CALLT:
    case OP_CALLR:
      return K_CALL;
    case OP_RET:
      return K_RET;
    case OP_EXIT:
      // SYSCALL is a far transfer (docs/sdm/README.md §1); libipt classes it ptic_far_call.
      return K_FAR_CALL;
    default:
      throw new RangeError(`not a branch opcode: ${op}`);
  }
}

/** True for near indirect JMP/CALL r/m (the "Indirect" COFI class of docs/sdm/README.md §1; RET is its own class). */
export function isIndirectOp(op: number): boolean {
  return op === OP_JMPT || op === OP_CALLT || op === OP_JMPR || op === OP_CALLR;
}
