// A tiny x86-64 assembler for exactly the instructions the workload generator emits, with
// labels, fixups and branch relaxation (short form when the target is in rel8 range).
// Encodings are hand-written from the Intel SDM Vol. 2 opcode tables (cited per method);
// REX = 0100WRXB (SDM Vol. 2A §2.2.1 "REX Prefixes"), ModR/M = mod|reg|rm, SIB = ss|index|base
// (SDM Vol. 2A Table 2-2 "32-Bit Addressing Forms with the ModR/M Byte" and Table 2-3 for SIB).
// Output is a pure function of the emitted sequence and the base address: deterministic.

/** General-purpose register numbers as encoded in ModR/M and REX (SDM Vol. 2A Table 3-1). */
export const RAX = 0, RCX = 1, RDX = 2, RBX = 3, RSP = 4, RBP = 5, RSI = 6, RDI = 7;
export const R8 = 8, R9 = 9, R10 = 10, R11 = 11, R12 = 12, R13 = 13, R14 = 14, R15 = 15;

/** Jcc condition codes: the low nibble of 7x (rel8) and 0F 8x (rel32) (SDM Vol. 2A "Jcc"). */
export const CC = { Z: 0x4, NZ: 0x5, L: 0xc, GE: 0xd, LE: 0xe, G: 0xf } as const;
/** A Jcc condition the generator uses. */
export type Cond = keyof typeof CC;

/** A position in the code, bound once with `bind`. */
export class Label {
  constructor(readonly id: number) {}
}

/** Raised for an impossible encoding (e.g. LOOP target outside rel8 range, push of an address ≥ 2^31). */
export class AsmError extends Error {
  override readonly name = 'AsmError';
}

/** Handle of one emitted instruction or datum; resolve its offset/length after `assemble`. */
export type ItemRef = number;

type Item =
  | { readonly t: 'bytes'; readonly b: readonly number[] }
  | { readonly t: 'label'; readonly label: Label }
  | { readonly t: 'align'; readonly n: number; readonly fill: number }
  /** A relative branch: `short` opcode bytes + rel8, or `near` opcode bytes + rel32. */
  | { readonly t: 'rel'; readonly short: readonly number[] | null; readonly near: readonly number[] | null;
      readonly target: Label; isNear: boolean }
  /** pre + disp32 (relative to the end of the instruction) + post. */
  | { readonly t: 'rip'; readonly pre: readonly number[]; readonly post: readonly number[]; readonly target: Label }
  /** pre + absolute address of target (4 bytes sign-extended, or 8 bytes). */
  | { readonly t: 'abs'; readonly pre: readonly number[]; readonly size: 4 | 8; readonly target: Label };

/** The assembled bytes and the resolved positions. */
export interface Assembled {
  readonly bytes: Uint8Array;
  offsetOf(label: Label): number;
  itemOffset(ref: ItemRef): number;
  itemLength(ref: ItemRef): number;
}

function rex(w: boolean, r: number, x: number, b: number): number[] {
  const v = 0x40 | (w ? 8 : 0) | ((r >> 3) << 2) | ((x >> 3) << 1) | (b >> 3);
  return v === 0x40 ? [] : [v];
}
function rexW(r: number, x: number, b: number): number[] {
  return rex(true, r, x, b);
}
function modrm(mod: number, reg: number, rm: number): number {
  return (mod << 6) | ((reg & 7) << 3) | (rm & 7);
}
function le32(v: number): number[] {
  return [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
}
function fitsI8(v: number): boolean {
  return v >= -128 && v <= 127;
}
function checkReg(r: number): void {
  if (!Number.isInteger(r) || r < 0 || r > 15) throw new AsmError(`bad register ${r}`);
}

/** Intel's recommended multi-byte NOPs, 1..9 bytes (SDM Vol. 2B "NOP", Table 4-12). */
const NOPS: readonly (readonly number[])[] = [
  [0x90],
  [0x66, 0x90],
  [0x0f, 0x1f, 0x00],
  [0x0f, 0x1f, 0x40, 0x00],
  [0x0f, 0x1f, 0x44, 0x00, 0x00],
  [0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00],
  [0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00],
  [0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
  [0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
];

/** Collects instructions and data, then lays them out at a base address. */
export class Assembler {
  private readonly items: Item[] = [];
  private labels = 0;
  private readonly bound = new Set<number>();

  /** A new, unbound label. */
  label(): Label {
    return new Label(this.labels++);
  }
  /** Binds `l` to the current position. */
  bind(l: Label): void {
    if (this.bound.has(l.id)) throw new AsmError(`label ${l.id} bound twice`);
    this.bound.add(l.id);
    this.items.push({ t: 'label', label: l });
  }
  /** A new label bound here. */
  here(): Label {
    const l = this.label();
    this.bind(l);
    return l;
  }
  private push(it: Item): ItemRef {
    this.items.push(it);
    return this.items.length - 1;
  }
  /** Raw bytes (data or filler). */
  bytes(b: readonly number[]): ItemRef {
    return this.push({ t: 'bytes', b: [...b] });
  }
  /** Pads with `fill` to a multiple of `n` bytes. */
  align(n: number, fill = 0xcc): ItemRef {
    return this.push({ t: 'align', n, fill });
  }

  // --- control transfers -------------------------------------------------------------------

  /** Jcc rel8 `7x cb` or rel32 `0F 8x cd`, chosen by relaxation (SDM Vol. 2A "Jcc"). */
  jcc(cond: Cond, target: Label, form: 'auto' | 'near' = 'auto'): ItemRef {
    const cc = CC[cond];
    return this.push({ t: 'rel', short: form === 'near' ? null : [0x70 | cc], near: [0x0f, 0x80 | cc], target, isNear: form === 'near' });
  }
  /** JMP rel8 `EB cb` or rel32 `E9 cd` (SDM Vol. 2A "JMP"). */
  jmp(target: Label, form: 'auto' | 'near' = 'auto'): ItemRef {
    return this.push({ t: 'rel', short: form === 'near' ? null : [0xeb], near: [0xe9], target, isNear: form === 'near' });
  }
  /** CALL rel32 `E8 cd` (SDM Vol. 2A "CALL"); a target right after it gives `E8 00000000`. */
  call(target: Label): ItemRef {
    return this.push({ t: 'rel', short: null, near: [0xe8], target, isNear: true });
  }
  /** LOOP rel8 `E2 cb`: RCX -= 1, jump if RCX ≠ 0, flags unchanged (SDM Vol. 2A "LOOP/LOOPcc"). */
  loop(target: Label): ItemRef {
    return this.push({ t: 'rel', short: [0xe2], near: null, target, isNear: false });
  }
  /** RET near `C3` (SDM Vol. 2B "RET"). */
  ret(): ItemRef {
    return this.bytes([0xc3]);
  }
  /** JMP r64 `FF /4`, mod=11 (SDM Vol. 2A "JMP"). */
  jmpReg(r: number): ItemRef {
    checkReg(r);
    return this.bytes([...rex(false, 0, 0, r), 0xff, modrm(3, 4, r)]);
  }
  /** CALL r64 `FF /2`, mod=11 (SDM Vol. 2A "CALL"). */
  callReg(r: number): ItemRef {
    checkReg(r);
    return this.bytes([...rex(false, 0, 0, r), 0xff, modrm(3, 2, r)]);
  }
  /** JMP qword [base + index*8] `FF /4` with SIB (SDM Vol. 2A "JMP"). */
  jmpTable(base: number, index: number): ItemRef {
    return this.bytes([...rex(false, 0, index, base), 0xff, ...this.sib8(4, base, index)]);
  }
  /** CALL qword [base + index*8] `FF /2` with SIB (SDM Vol. 2A "CALL"). */
  callTable(base: number, index: number): ItemRef {
    return this.bytes([...rex(false, 0, index, base), 0xff, ...this.sib8(2, base, index)]);
  }
  private sib8(reg: number, base: number, index: number): number[] {
    checkReg(base);
    checkReg(index);
    // mod=00 with base 101 (RBP/R13) would mean disp32; index 100 (RSP) means "no index".
    if ((base & 7) === 5 || index === RSP) throw new AsmError('unsupported SIB base/index');
    return [modrm(0, reg, 4), (3 << 6) | ((index & 7) << 3) | (base & 7)];
  }
  /** SYSCALL `0F 05` (SDM Vol. 2B "SYSCALL"). */
  syscall(): ItemRef {
    return this.bytes([0x0f, 0x05]);
  }

  // --- data movement and arithmetic -------------------------------------------------------

  /** MOV r32, imm32 `B8+rd id`; zero-extends into the 64-bit register (SDM Vol. 2B "MOV"). */
  movImm32(r: number, imm: number): ItemRef {
    checkReg(r);
    return this.bytes([...rex(false, 0, 0, r), 0xb8 + (r & 7), ...le32(imm)]);
  }
  /** MOV r64, imm64 `REX.W B8+rd io` with the absolute address of `target` (SDM Vol. 2B "MOV"). */
  movAbs64(r: number, target: Label): ItemRef {
    checkReg(r);
    return this.push({ t: 'abs', pre: [...rexW(0, 0, r), 0xb8 + (r & 7)], size: 8, target });
  }
  /** MOV r/m32, r32 `89 /r`, register form (SDM Vol. 2B "MOV"). */
  movR32(dst: number, src: number): ItemRef {
    checkReg(dst);
    checkReg(src);
    return this.bytes([...rex(false, src, 0, dst), 0x89, modrm(3, src, dst)]);
  }
  /** DEC r/m32 `FF /1` (SDM Vol. 2A "DEC"). */
  dec32(r: number): ItemRef {
    checkReg(r);
    return this.bytes([...rex(false, 0, 0, r), 0xff, modrm(3, 1, r)]);
  }
  /** INC r/m32 `FF /0` (SDM Vol. 2A "INC"). */
  inc32(r: number): ItemRef {
    checkReg(r);
    return this.bytes([...rex(false, 0, 0, r), 0xff, modrm(3, 0, r)]);
  }
  /** AND r/m32, imm `83 /4 ib` or `81 /4 id` (SDM Vol. 2A "AND"). */
  and32(r: number, imm: number): ItemRef {
    return this.grp1(4, r, imm);
  }
  /** CMP r/m32, imm `83 /7 ib` or `81 /7 id` (SDM Vol. 2A "CMP"). */
  cmp32(r: number, imm: number): ItemRef {
    return this.grp1(7, r, imm);
  }
  private grp1(ext: number, r: number, imm: number): ItemRef {
    checkReg(r);
    return fitsI8(imm)
      ? this.bytes([...rex(false, 0, 0, r), 0x83, modrm(3, ext, r), imm & 0xff])
      : this.bytes([...rex(false, 0, 0, r), 0x81, modrm(3, ext, r), ...le32(imm)]);
  }
  /** TEST r/m32, imm32 `F7 /0 id` (SDM Vol. 2B "TEST"). */
  test32(r: number, imm: number): ItemRef {
    checkReg(r);
    return this.bytes([...rex(false, 0, 0, r), 0xf7, modrm(3, 0, r), ...le32(imm)]);
  }
  /** XOR r/m32, r32 `31 /r` (SDM Vol. 2B "XOR"). */
  xor32(dst: number, src: number): ItemRef {
    checkReg(dst);
    checkReg(src);
    return this.bytes([...rex(false, src, 0, dst), 0x31, modrm(3, src, dst)]);
  }
  /** LEA r64, [RIP + disp32] `REX.W 8D /r`, mod=00 rm=101 (SDM Vol. 2A "LEA", §2.2.1.6 RIP-relative). */
  leaRip(r: number, target: Label): ItemRef {
    checkReg(r);
    return this.push({ t: 'rip', pre: [...rexW(r, 0, 0), 0x8d, modrm(0, r, 5)], post: [], target });
  }
  /** MOVZX r32, byte [base + index] `0F B6 /r` with SIB, scale 1 (SDM Vol. 2B "MOVZX"). */
  movzxByte(dst: number, base: number, index: number): ItemRef {
    checkReg(dst);
    checkReg(base);
    checkReg(index);
    if ((base & 7) === 5 || index === RSP) throw new AsmError('unsupported SIB base/index');
    return this.bytes([...rex(false, dst, index, base), 0x0f, 0xb6, modrm(0, dst, 4), ((index & 7) << 3) | (base & 7)]);
  }
  /** ADD qword [RSP], imm8 `REX.W 83 /0 ib` — edits the return address (SDM Vol. 2A "ADD"). */
  addRetAddr(imm: number): ItemRef {
    if (!fitsI8(imm)) throw new AsmError(`imm8 out of range: ${imm}`);
    return this.bytes([0x48, 0x83, modrm(0, 0, 4), 0x24, imm & 0xff]);
  }
  /** POP r64 `58+rd` (SDM Vol. 2B "POP"). */
  pop(r: number): ItemRef {
    checkReg(r);
    return this.bytes([...rex(false, 0, 0, r), 0x58 + (r & 7)]);
  }
  /** PUSH imm32 `68 id`, sign-extended to 64 bits: the absolute address of `target` (SDM Vol. 2B "PUSH"). */
  pushAddr(target: Label): ItemRef {
    return this.push({ t: 'abs', pre: [0x68], size: 4, target });
  }
  /** PTWRITE r64 `F3 REX.W 0F AE /4` (SDM Vol. 2B "PTWRITE"); #UD without CPUID.(EAX=14H,ECX=0):EBX[4]. */
  ptwrite64(r: number): ItemRef {
    checkReg(r);
    return this.bytes([0xf3, ...rexW(0, 0, r), 0x0f, 0xae, modrm(3, 4, r)]);
  }
  /** PTWRITE r32 `F3 0F AE /4` (SDM Vol. 2B "PTWRITE"). */
  ptwrite32(r: number): ItemRef {
    checkReg(r);
    return this.bytes([0xf3, ...rex(false, 0, 0, r), 0x0f, 0xae, modrm(3, 4, r)]);
  }
  /** An n-byte NOP built from the recommended forms (SDM Vol. 2B "NOP"). */
  nop(n: number): ItemRef {
    const out: number[] = [];
    let left = n;
    while (left > 0) {
      const k = Math.min(left, NOPS.length);
      out.push(...(NOPS[k - 1] as readonly number[]));
      left -= k;
    }
    return this.bytes(out);
  }
  /** INT3 `CC` bytes: filler that traps if the path ever reaches it (SDM Vol. 2A "INT n/INTO/INT3"). */
  int3(n = 1): ItemRef {
    return this.bytes(new Array<number>(n).fill(0xcc));
  }
  /** An 8-byte little-endian absolute address of `target` (a jump-table entry). */
  addr64(target: Label): ItemRef {
    return this.push({ t: 'abs', pre: [], size: 8, target });
  }

  // --- layout ----------------------------------------------------------------------------

  /** Lays out all items at `base`, relaxing branches until every rel8 fits. */
  assemble(base: bigint): Assembled {
    for (const l of this.items) if (l.t === 'rel' && !l.isNear && l.short === null) l.isNear = true;
    let offs: number[] = [];
    const labelAt = new Map<number, number>();
    for (;;) {
      offs = this.layout(labelAt);
      let changed = false;
      for (let i = 0; i < this.items.length; i++) {
        const it = this.items[i] as Item;
        if (it.t !== 'rel' || it.isNear) continue;
        const rel = this.target(labelAt, it.target) - ((offs[i] as number) + itemLen(it, 0));
        if (!fitsI8(rel)) {
          if (it.near === null) throw new AsmError(`rel8 target out of range (${rel}) for LOOP`);
          it.isNear = true;
          changed = true;
        }
      }
      if (!changed) break;
    }
    const total = offs[this.items.length] as number;
    const out = new Uint8Array(total);
    for (let i = 0; i < this.items.length; i++) {
      const it = this.items[i] as Item;
      const at = offs[i] as number;
      const bytes = this.encode(it, at, labelAt, base);
      out.set(bytes, at);
    }
    return {
      bytes: out,
      offsetOf: (l) => this.target(labelAt, l),
      itemOffset: (r) => offs[r] as number,
      itemLength: (r) => (offs[r + 1] as number) - (offs[r] as number),
    };
  }

  private target(labelAt: Map<number, number>, l: Label): number {
    const v = labelAt.get(l.id);
    if (v === undefined) throw new AsmError(`label ${l.id} never bound`);
    return v;
  }

  private layout(labelAt: Map<number, number>): number[] {
    const offs: number[] = [];
    let at = 0;
    for (const it of this.items) {
      offs.push(at);
      if (it.t === 'label') labelAt.set(it.label.id, at);
      at += itemLen(it, at);
    }
    offs.push(at);
    return offs;
  }

  private encode(it: Item, at: number, labelAt: Map<number, number>, base: bigint): number[] {
    switch (it.t) {
      case 'bytes':
        return [...it.b];
      case 'label':
        return [];
      case 'align':
        return new Array<number>(itemLen(it, at)).fill(it.fill);
      case 'rel': {
        const op = (it.isNear ? it.near : it.short) as readonly number[];
        const rel = this.target(labelAt, it.target) - (at + itemLen(it, at));
        return it.isNear ? [...op, ...le32(rel)] : [...op, rel & 0xff];
      }
      case 'rip': {
        const end = at + itemLen(it, at);
        return [...it.pre, ...le32(this.target(labelAt, it.target) - end), ...it.post];
      }
      case 'abs': {
        const a = base + BigInt(this.target(labelAt, it.target));
        if (it.size === 4) {
          if (a >= 0x8000_0000n) throw new AsmError(`address 0x${a.toString(16)} does not fit a sign-extended imm32`);
          return [...it.pre, ...le32(Number(a))];
        }
        const b: number[] = [];
        for (let i = 0n; i < 8n; i++) b.push(Number((a >> (8n * i)) & 0xffn));
        return [...it.pre, ...b];
      }
    }
  }
}

function itemLen(it: Item, at: number): number {
  switch (it.t) {
    case 'bytes':
      return it.b.length;
    case 'label':
      return 0;
    case 'align':
      return (it.n - (at % it.n)) % it.n;
    case 'rel':
      return it.isNear ? (it.near as readonly number[]).length + 4 : (it.short as readonly number[]).length + 1;
    case 'rip':
      return it.pre.length + 4 + it.post.length;
    case 'abs':
      return it.pre.length + it.size;
  }
}
