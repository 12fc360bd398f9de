// The structured program a workload is built from, before it becomes x86 bytes and IR (lower.ts).
// Every construct has a known worst-case branch count (`cost`), which bounds the path length.
import type { Cond } from './x86.js';

/** Where a conditional branch's outcome comes from: bits of a live counter, a threshold, or a byte table. */
export type CondSource =
  | { readonly t: 'test'; readonly reg: number; readonly mask: number; readonly cc: 'Z' | 'NZ' }
  | { readonly t: 'cmp'; readonly reg: number; readonly imm: number; readonly cc: Cond }
  | { readonly t: 'table'; readonly reg: number; readonly bytes: readonly number[]; readonly cc: 'Z' | 'NZ' };

/** How a function returns: matched RET, or an edited return address (unmatched RET, docs/sdm/packets.md §7). */
export type ReturnStyle =
  /** `ret` to the CALL's Next IP. */
  | { readonly t: 'plain' }
  /** `add qword [rsp], skip; ret`: returns `skip` bytes past the Next IP (call sites pad with INT3). */
  | { readonly t: 'add'; readonly skip: number }
  /** `pop rax; push imm32 <after the call site's padding>; ret` (one call site only). */
  | { readonly t: 'push'; readonly skip: number };

/** A function: called with CALL rel32, CALL r/m through a table, or CALL r64. */
export interface Fn {
  readonly id: number;
  readonly body: readonly Stmt[];
  readonly ret: ReturnStyle;
  /** Worst-case branches of one call, CALL and RET included. */
  readonly cost: number;
}

/** One structured statement. */
export type Stmt =
  /** Counted loop on `reg`: `dec`+`jnz`, `inc`+`cmp`+`jl`, or LOOP (reg = RCX, short body). */
  | { readonly t: 'loop'; readonly form: 'dec' | 'up' | 'loop'; readonly reg: number; readonly count: number; readonly body: readonly Stmt[] }
  /** `jcc else`, then-part, [`jmp join`, else-part]. */
  | { readonly t: 'if'; readonly cond: CondSource; readonly then: readonly Stmt[]; readonly else: readonly Stmt[] | null }
  /** CALL rel32. */
  | { readonly t: 'call'; readonly fn: Fn }
  /** CALL qword [table + idx*8] (idx = reg & (n-1), or a constant) or `mov rax, imm64; call rax`. */
  | { readonly t: 'icall'; readonly fns: readonly Fn[]; readonly idx: IndexSource; readonly via: 'table' | 'reg' }
  /** JMP qword [table + idx*8] into one of several cases, each ending with `jmp join`. */
  | { readonly t: 'switch'; readonly idx: IndexSource; readonly cases: readonly (readonly Stmt[])[] }
  /** `call $+5; pop rax`: a zero-length CALL. */
  | { readonly t: 'zcall' }
  /** JMP rel over `skip` INT3 bytes. */
  | { readonly t: 'jmp'; readonly skip: number }
  /** `mov rax, imm64; jmp rax` over `skip` INT3 bytes. */
  | { readonly t: 'ijmp'; readonly skip: number }
  /** An n-byte NOP (non-branch instructions between branches). */
  | { readonly t: 'nop'; readonly n: number };

/** A table index: `reg & (n-1)` of a live counter, or a constant. */
export type IndexSource = { readonly t: 'reg'; readonly reg: number } | { readonly t: 'const'; readonly value: number };

/** A whole program: `main` runs first, then the exit SYSCALL. */
export interface Program {
  readonly main: readonly Stmt[];
  readonly fns: readonly Fn[];
}

/** Worst-case number of branches executed by a statement list. */
export function seqCost(s: readonly Stmt[]): number {
  let c = 0;
  for (const x of s) c += stmtCost(x);
  return c;
}

/** Worst-case number of branches executed by one statement. */
export function stmtCost(s: Stmt): number {
  switch (s.t) {
    case 'loop':
      return s.count * (seqCost(s.body) + 1);
    case 'if':
      return 1 + (s.else === null ? seqCost(s.then) : Math.max(seqCost(s.then) + 1, seqCost(s.else)));
    case 'call':
      return s.fn.cost;
    case 'icall':
      return Math.max(...s.fns.map((f) => f.cost));
    case 'switch':
      return 1 + Math.max(...s.cases.map((c, i) => seqCost(c) + (i < s.cases.length - 1 ? 1 : 0)));
    case 'zcall':
    case 'jmp':
    case 'ijmp':
      return 1;
    case 'nop':
      return 0;
  }
}
