// Lowers a structured Program (program.ts) to x86-64 bytes (x86.ts) and, in the same walk, to the
// IR rows (ops.ts) that let the model follow the path. Layout: main at the entry point (offset 0)
// ending with exit(0), then the functions (16-byte aligned, INT3 padding), then the read-only
// data tables (8-byte aligned) that indirect branches and conditions read through RIP-relative LEA.
import {
  COND_G, COND_GE, COND_L, COND_LE, COND_NZ, COND_Z, OP_AND, OP_CALL, OP_CALLR, OP_CALLT, OP_CMP, OP_DEC, OP_EXIT,
  OP_INC, OP_JCC, OP_JMP, OP_JMPR, OP_JMPT, OP_LDB, OP_LOOP, OP_MOV, OP_MOVA, OP_POP, OP_PUSH, OP_RET, OP_RETADD,
  OP_SET, OP_TEST, ROW,
} from './ops.js';
import type { CondSource, Fn, IndexSource, Program, Stmt } from './program.js';
import { type Assembled, Assembler, type Cond, type ItemRef, Label, RAX, RCX, RDI, RDX } from './x86.js';

const COND_OF: Record<Cond, number> = { Z: COND_Z, NZ: COND_NZ, L: COND_L, GE: COND_GE, LE: COND_LE, G: COND_G };

/** Linux x86-64 `exit` system call number (arch/x86/entry/syscalls/syscall_64.tbl). */
export const SYS_EXIT = 60;

interface Rec {
  readonly op: number;
  readonly a: number;
  /** A value, or a label whose offset is the value. */
  readonly b: number | Label;
  readonly c: number;
  readonly ref: ItemRef;
}

type Table = { readonly label: Label; readonly q: readonly Label[] } | { readonly label: Label; readonly bytes: readonly number[] };

/** The image and IR of a lowered program. */
export interface Lowered {
  readonly image: Uint8Array;
  readonly entryOffset: number;
  /** Offset where the read-only data tables start (everything before is instructions). */
  readonly codeEnd: number;
  readonly code: Int32Array;
}

/** Lowers `p` to an image at `base` and its IR. */
export function lower(p: Program, base: bigint): Lowered {
  return new Lowering().run(p, base);
}

class Lowering {
  private readonly asm = new Assembler();
  private readonly recs: Rec[] = [];
  private readonly tables: Table[] = [];
  private readonly fnLabel = new Map<number, Label>();
  /** Return label of each `push`-style function (its one call site). */
  private readonly pushTarget = new Map<number, Label>();

  run(p: Program, base: bigint): Lowered {
    for (const f of p.fns) this.fnLabel.set(f.id, this.asm.label());
    const entry = this.asm.here();
    this.seq(p.main);
    this.asm.movImm32(RAX, SYS_EXIT);
    this.asm.xor32(RDI, RDI);
    this.rec(OP_EXIT, 0, 0, 0, this.asm.syscall());
    for (const f of p.fns) this.fn(f);
    this.asm.align(8, 0xcc);
    const data = this.asm.here();
    for (const t of this.tables) {
      this.asm.bind(t.label);
      if ('q' in t) for (const l of t.q) this.asm.addr64(l);
      else this.asm.bytes(t.bytes);
    }
    const out = this.asm.assemble(base);
    return { image: out.bytes, entryOffset: out.offsetOf(entry), codeEnd: out.offsetOf(data), code: this.rows(out) };
  }

  private rows(out: Assembled): Int32Array {
    const code = new Int32Array(this.recs.length * ROW);
    this.recs.forEach((r, i) => {
      code.set([r.op, r.a, r.b instanceof Label ? out.offsetOf(r.b) : r.b, r.c, out.itemOffset(r.ref), out.itemLength(r.ref)], i * ROW);
    });
    return code;
  }

  private rec(op: number, a: number, b: number | Label, c: number, ref: ItemRef): void {
    this.recs.push({ op, a, b, c, ref });
  }

  private label(f: Fn): Label {
    const l = this.fnLabel.get(f.id);
    if (l === undefined) throw new Error(`function ${f.id} is not in the program`);
    return l;
  }

  private fn(f: Fn): void {
    this.asm.align(16, 0xcc);
    this.asm.bind(this.label(f));
    this.seq(f.body);
    switch (f.ret.t) {
      case 'plain':
        break;
      case 'add':
        this.rec(OP_RETADD, 0, f.ret.skip, 0, this.asm.addRetAddr(f.ret.skip));
        break;
      case 'push': {
        const target = this.returnLabel(f);
        this.rec(OP_POP, RAX, 0, 0, this.asm.pop(RAX));
        this.rec(OP_PUSH, 0, target, 0, this.asm.pushAddr(target));
        break;
      }
    }
    this.rec(OP_RET, 0, 0, 0, this.asm.ret());
  }

  private seq(s: readonly Stmt[]): void {
    for (const x of s) this.stmt(x);
  }

  private stmt(s: Stmt): void {
    const asm = this.asm;
    switch (s.t) {
      case 'loop': {
        if (s.form === 'up') this.rec(OP_SET, s.reg, 0, 0, asm.xor32(s.reg, s.reg));
        else this.rec(OP_SET, s.reg, s.count, 0, asm.movImm32(s.reg, s.count));
        const top = asm.here();
        this.seq(s.body);
        if (s.form === 'dec') {
          this.rec(OP_DEC, s.reg, 0, 0, asm.dec32(s.reg));
          this.rec(OP_JCC, COND_NZ, top, 0, asm.jcc('NZ', top));
        } else if (s.form === 'up') {
          this.rec(OP_INC, s.reg, 0, 0, asm.inc32(s.reg));
          this.rec(OP_CMP, s.reg, s.count, 0, asm.cmp32(s.reg, s.count));
          this.rec(OP_JCC, COND_L, top, 0, asm.jcc('L', top));
        } else {
          if (s.reg !== RCX) throw new Error('LOOP needs RCX');
          this.rec(OP_LOOP, 0, top, 0, asm.loop(top));
        }
        return;
      }
      case 'if': {
        const skip = asm.label();
        const cc = this.cond(s.cond);
        this.rec(OP_JCC, COND_OF[cc], skip, 0, asm.jcc(cc, skip));
        this.seq(s.then);
        if (s.else === null) {
          asm.bind(skip);
          return;
        }
        const join = asm.label();
        this.rec(OP_JMP, 0, join, 0, asm.jmp(join));
        asm.bind(skip);
        this.seq(s.else);
        asm.bind(join);
        return;
      }
      case 'call': {
        this.rec(OP_CALL, 0, this.label(s.fn), 0, asm.call(this.label(s.fn)));
        this.afterCall(s.fn);
        return;
      }
      case 'icall': {
        if (s.via === 'reg') {
          const f = s.fns[s.idx.t === 'const' ? s.idx.value : 0] as Fn;
          this.rec(OP_MOVA, RAX, this.label(f), 0, asm.movAbs64(RAX, this.label(f)));
          this.rec(OP_CALLR, RAX, 0, 0, asm.callReg(RAX));
          this.afterCall(f);
          return;
        }
        const tbl = asm.label();
        this.tables.push({ label: tbl, q: s.fns.map((f) => this.label(f)) });
        this.index(s.idx, s.fns.length);
        asm.leaRip(RDX, tbl);
        this.rec(OP_CALLT, 0, tbl, RAX, asm.callTable(RDX, RAX));
        return;
      }
      case 'switch': {
        const tbl = asm.label();
        const cases = s.cases.map(() => asm.label());
        const join = asm.label();
        this.tables.push({ label: tbl, q: cases });
        this.index(s.idx, s.cases.length);
        asm.leaRip(RDX, tbl);
        this.rec(OP_JMPT, 0, tbl, RAX, asm.jmpTable(RDX, RAX));
        s.cases.forEach((body, i) => {
          asm.bind(cases[i] as Label);
          this.seq(body);
          if (i < s.cases.length - 1) this.rec(OP_JMP, 0, join, 0, asm.jmp(join));
        });
        asm.bind(join);
        return;
      }
      case 'zcall': {
        const after = asm.label();
        this.rec(OP_CALL, 0, after, 0, asm.call(after));
        asm.bind(after);
        this.rec(OP_POP, RAX, 0, 0, asm.pop(RAX));
        return;
      }
      case 'jmp': {
        const over = asm.label();
        this.rec(OP_JMP, 0, over, 0, asm.jmp(over));
        asm.int3(s.skip);
        asm.bind(over);
        return;
      }
      case 'ijmp': {
        const over = asm.label();
        this.rec(OP_MOVA, RAX, over, 0, asm.movAbs64(RAX, over));
        this.rec(OP_JMPR, RAX, 0, 0, asm.jmpReg(RAX));
        asm.int3(s.skip);
        asm.bind(over);
        return;
      }
      case 'nop':
        asm.nop(s.n);
        return;
    }
  }

  /** Call-site padding: the bytes an edited return address skips (INT3, so a wrong path traps). */
  private afterCall(f: Fn): void {
    if (f.ret.t === 'plain') return;
    this.asm.int3(f.ret.skip);
    if (f.ret.t === 'push') this.asm.bind(this.returnLabel(f)); // binding twice throws: one call site only
  }

  /** The address a `push`-style function returns to (bound at its call site). */
  private returnLabel(f: Fn): Label {
    let l = this.pushTarget.get(f.id);
    if (l === undefined) {
      l = this.asm.label();
      this.pushTarget.set(f.id, l);
    }
    return l;
  }

  /** EAX = table index: `mov eax, reg; and eax, n-1` or `mov eax, imm32`. */
  private index(idx: IndexSource, n: number): void {
    if (idx.t === 'const') {
      this.rec(OP_SET, RAX, idx.value, 0, this.asm.movImm32(RAX, idx.value));
      return;
    }
    this.rec(OP_MOV, RAX, idx.reg, 0, this.asm.movR32(RAX, idx.reg));
    this.rec(OP_AND, RAX, n - 1, 0, this.asm.and32(RAX, n - 1));
  }

  /** Sets the flags for a condition; returns the Jcc condition that skips the then-part. */
  private cond(c: CondSource): Cond {
    const asm = this.asm;
    switch (c.t) {
      case 'test':
        this.rec(OP_TEST, c.reg, c.mask, 0, asm.test32(c.reg, c.mask));
        return c.cc;
      case 'cmp':
        this.rec(OP_CMP, c.reg, c.imm, 0, asm.cmp32(c.reg, c.imm));
        return c.cc;
      case 'table': {
        const tbl = asm.label();
        this.tables.push({ label: tbl, bytes: c.bytes });
        this.rec(OP_MOV, RAX, c.reg, 0, asm.movR32(RAX, c.reg));
        this.rec(OP_AND, RAX, c.bytes.length - 1, 0, asm.and32(RAX, c.bytes.length - 1));
        asm.leaRip(RDX, tbl);
        this.rec(OP_LDB, RAX, tbl, RAX, asm.movzxByte(RAX, RDX, RAX));
        this.rec(OP_TEST, RAX, 0xff, 0, asm.test32(RAX, 0xff));
        return c.cc;
      }
    }
  }
}
