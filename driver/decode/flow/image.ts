// Code images for flow reconstruction: one or more byte ranges at virtual
// bases, each decoded lazily, once per address, with iced-x86 into a compact
// per-address table (class, length, direct-branch displacement), so the hot
// walk reads typed arrays instead of decoder objects. Addresses outside every
// image are a value (`nomap`, libipt's pte_nomap), never a throw.
import { Code, Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic, Register } from 'iced-x86';
import { Cls, type ClsCode } from './insn-class.js';

const TWO32 = 4294967296;

/** One image: `bytes` loaded at virtual address `base`. */
export interface ImageSpec {
  readonly bytes: Uint8Array;
  readonly base: bigint;
}

/** Where an IP lies: an image and an offset in it, or nowhere (`nomap`). */
export type ImageLookup =
  | { readonly ok: true; readonly image: number; readonly offset: number }
  | { readonly ok: false; readonly code: 'nomap'; readonly ip: bigint };

/** The decoded facts of one instruction (for tests and tools; the walker reads the tables). */
export interface InsnInfo {
  readonly cls: ClsCode;
  readonly length: number;
  /** Direct branch target, for jcc/jmp/call. */
  readonly target?: bigint;
}

/**
 * The per-address table of one image in one execution mode. Index = offset in
 * the image. `cls[off] === Cls.unknown` until `decode(off)` ran.
 */
export class InsnTable {
  /** Class code per start offset (Cls). */
  readonly cls: Uint8Array;
  /** Instruction length per start offset. */
  readonly len: Uint8Array;
  /** Direct branches: target − Next IP (rel8/rel32 sign-extended). */
  readonly disp: Int32Array;
  private readonly decoder: Decoder;
  private readonly insn = new Instruction();

  constructor(bytes: Uint8Array, private readonly base: bigint, bitness: 16 | 32 | 64) {
    const n = bytes.length;
    this.cls = new Uint8Array(n);
    this.len = new Uint8Array(n);
    this.disp = new Int32Array(n);
    this.decoder = new Decoder(bitness, bytes, DecoderOptions.None);
  }

  /** Decodes the instruction at `off` (0 ≤ off < size) into the table; returns its class. */
  decode(off: number): number {
    const d = this.decoder;
    const ins = this.insn;
    d.position = off;
    d.ip = this.base + BigInt(off);
    d.decodeOut(ins);
    const length = ins.length;
    let c: number = classify(ins);
    if (ins.code === Code.INVALID || length === 0) c = Cls.bad;
    this.len[off] = c === Cls.bad ? 1 : length;
    if (c === Cls.jcc || c === Cls.jmp || c === Cls.call) {
      const disp = Number(BigInt.asIntN(64, ins.nearBranchTarget - (this.base + BigInt(off + length))));
      this.disp[off] = disp;
      if (c === Cls.call && disp === 0) c = Cls.callZero;
    }
    this.cls[off] = c;
    return c;
  }

  /** Frees the iced-x86 objects (WebAssembly memory). */
  dispose(): void {
    this.decoder.free();
    this.insn.free();
  }
}

/** The walker class of one decoded instruction (libipt pt_insn_class, refined: insn-class.ts). */
function classify(ins: Instruction): number {
  switch (ins.flowControl) {
    case FlowControl.Next:
      return ins.code === Code.Mov_cr_r64 || ins.code === Code.Mov_cr_r32 ? (ins.op0Register === Register.CR3 ? Cls.movCr3 : Cls.other) : Cls.other;
    case FlowControl.ConditionalBranch:
      return Cls.jcc;
    case FlowControl.UnconditionalBranch:
      return ins.isJmpFar ? Cls.farJmp : Cls.jmp;
    case FlowControl.IndirectBranch:
      return ins.isJmpFarIndirect ? Cls.farJmp : Cls.jmpInd;
    case FlowControl.Call:
      if (ins.isCallNear) return Cls.call;
      if (ins.isCallFar) return Cls.farCall;
      // SYSCALL, SYSENTER and VMCALL are far calls; VMLAUNCH and VMRESUME enter the guest, a far
      // return (libipt's classes: ptic_far_call and ptic_far_return; spec §10).
      if (ins.mnemonic === Mnemonic.Vmlaunch || ins.mnemonic === Mnemonic.Vmresume) return Cls.farRet;
      return ins.mnemonic === Mnemonic.Syscall || ins.mnemonic === Mnemonic.Sysenter || ins.mnemonic === Mnemonic.Vmcall ? Cls.farCall : Cls.other;
    case FlowControl.IndirectCall:
      return ins.isCallFarIndirect ? Cls.farCall : Cls.callInd;
    case FlowControl.Return:
      return ins.mnemonic === Mnemonic.Ret ? Cls.ret : Cls.farRet;
    case FlowControl.Interrupt:
      return Cls.farCall; // INT n / INT3 / INTO (libipt: ptic_far_call); traced as FUP+TIP (spec §10)
    default:
      return Cls.other; // XBEGIN/XABORT/XEND, UD0/UD1/UD2
  }
}

/** A set of code images, non-overlapping, with lazily filled tables per execution mode. */
export class ImageSet {
  /** Images in the order given. */
  readonly images: readonly ImageSpec[];
  /** Base of image i, low/high 32 bits. */
  readonly baseLo: Float64Array;
  readonly baseHi: Float64Array;
  /** Size of image i in bytes. */
  readonly size: Float64Array;
  private readonly tables = new Map<number, InsnTable[]>();
  /** Offset found by the last successful `find()`. */
  foundOff = 0;

  constructor(images: readonly ImageSpec[]) {
    this.images = images;
    const n = images.length;
    this.baseLo = new Float64Array(n);
    this.baseHi = new Float64Array(n);
    this.size = new Float64Array(n);
    images.forEach((im, i) => {
      this.baseLo[i] = Number(im.base & 0xffff_ffffn);
      this.baseHi[i] = Number((im.base >> 32n) & 0xffff_ffffn);
      this.size[i] = im.bytes.length;
    });
  }

  /** The table of image `i` for `bitness` (created on first use). */
  table(i: number, bitness: 16 | 32 | 64 = 64): InsnTable {
    let list = this.tables.get(bitness);
    if (!list) { list = []; this.tables.set(bitness, list); }
    let t = list[i];
    if (!t) { t = new InsnTable(this.images[i]!.bytes, this.images[i]!.base, bitness); list[i] = t; }
    return t;
  }

  /** The image holding the IP lo/hi (uint32 halves), or -1; the offset goes to `foundOff`. */
  find(lo: number, hi: number): number {
    const n = this.size.length;
    for (let i = 0; i < n; i++) {
      const dh = hi - this.baseHi[i]!;
      if (dh < -1 || dh > 1) continue;
      const off = dh * TWO32 + (lo - this.baseLo[i]!);
      if (off >= 0 && off < this.size[i]!) { this.foundOff = off; return i; }
    }
    return -1;
  }

  /** Where `ip` lies (typed result, never throws). */
  lookup(ip: bigint): ImageLookup {
    const m = BigInt.asUintN(64, ip);
    const i = this.find(Number(m & 0xffff_ffffn), Number(m >> 32n));
    return i < 0 ? { ok: false, code: 'nomap', ip: m } : { ok: true, image: i, offset: this.foundOff };
  }

  /** The decoded instruction at `ip` (64-bit mode unless given), or `nomap`. */
  insnAt(ip: bigint, bitness: 16 | 32 | 64 = 64): InsnInfo | { readonly ok: false; readonly code: 'nomap'; readonly ip: bigint } {
    const at = this.lookup(ip);
    if (!at.ok) return at;
    const t = this.table(at.image, bitness);
    const c = t.cls[at.offset] || t.decode(at.offset);
    const length = t.len[at.offset]!;
    const info: InsnInfo = { cls: c as ClsCode, length };
    if (c === Cls.jcc || c === Cls.jmp || c === Cls.call || c === Cls.callZero) {
      return { ...info, target: BigInt.asUintN(64, ip + BigInt(length) + BigInt(t.disp[at.offset]!)) };
    }
    return info;
  }

  /** Frees every table's decoder. */
  dispose(): void {
    for (const list of this.tables.values()) for (const t of list) t?.dispose();
    this.tables.clear();
  }
}

/** Parses `image.bin@0xBASE` into a path and a base (null when malformed). */
export function parseImageArg(arg: string): { readonly path: string; readonly base: bigint } | null {
  const at = arg.lastIndexOf('@');
  if (at <= 0) return null;
  const baseText = arg.slice(at + 1);
  if (!/^(0x[0-9a-fA-F]+|[0-9]+)$/.test(baseText)) return null;
  const base = BigInt(baseText);
  if (base >= 1n << 64n) return null;
  return { path: arg.slice(0, at), base };
}
