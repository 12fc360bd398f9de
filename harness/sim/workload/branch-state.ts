// The public fields of one retired branch, with their starting values: what the two ways of
// walking a workload's path (IrCursor interprets the IR, PathCursor replays the packed path)
// fill in at each `next()`. One object per walk, reused: copy what you keep.
import type { BranchEvent } from './model.js';

/** A walk's current branch (BranchEvent, writable by the walk). */
export class BranchState implements BranchEvent {
  /** Index of the current branch on the path (0-based); −1 before the first `next()`. */
  index = -1;
  /** IP of the branch instruction. */
  ip = 0;
  /** K_* kind (ops.ts); `KIND_NAMES[kind]` is the flow-json spelling. */
  kind = 0;
  /** Jcc/LOOP only: the branch was taken. */
  taken = false;
  /** IP of the next instruction executed; −1 when it is outside the workload (the exit SYSCALL). */
  to = 0;
  /** IP of the instruction after the branch (ip + length). */
  nextIp = 0;
  /** Near JMP/CALL r/m. */
  indirect = false;
  /** A zero-length CALL (`E8 00000000`). */
  zeroLength = false;
  /** RET only: the target is the Next IP its CALL pushed (else the return address was edited). */
  retMatched = false;
  /** IR row index of the branch (identifies the site). */
  site = 0;
}
