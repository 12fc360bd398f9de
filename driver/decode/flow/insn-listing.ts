// The instruction listing of `flow --insn` (ptxed's default output): every instruction the flow
// executed, with its disassembly (iced-x86, Intel syntax, or AT&T with ptxed's --att). It is
// rebuilt from the flow records: a record names every branch, taken or not, so between one
// record's target and the next record's IP the code runs straight, and is listed by decoding it
// from the images. Events become bracketed lines, as ptxed prints them.
import { Decoder, DecoderOptions, Formatter, FormatterSyntax, Instruction } from 'iced-x86';
import type { ImageSpec } from './image.js';
import type { FlowRecord } from './record.js';

export interface InsnListingOptions {
  /** ptxed's --att: AT&T syntax instead of Intel's. */
  readonly att?: boolean;
  /** ptxed's --raw-insn: the instruction's bytes after its address. */
  readonly rawBytes?: boolean;
  /** ptxed's --no-inst: addresses only. */
  readonly addressesOnly?: boolean;
  /** A name for an address (`sym+0xoff`), printed after it. */
  readonly symbol?: (ip: bigint) => string | undefined;
  /** The most instructions listed between two records before the listing gives that stretch up. */
  readonly maxSteps: number;
}

const MASK64 = (1n << 64n) - 1n;
const hexOf = (v: bigint): string => `0x${v.toString(16)}`;

/** Lists instructions from flow records, in order; free its decoders with dispose(). */
export class InsnListing {
  /** Instructions listed. */
  count = 0;
  private cursor: bigint | undefined;
  private readonly decoders: { readonly base: bigint; readonly end: bigint; readonly bytes: Uint8Array; readonly decoder: Decoder }[];
  private readonly formatter: Formatter;
  private readonly insn = new Instruction();

  constructor(images: readonly ImageSpec[], private readonly opts: InsnListingOptions) {
    this.decoders = images.map((im) => ({ base: im.base, end: im.base + BigInt(im.bytes.length), bytes: im.bytes, decoder: new Decoder(64, im.bytes, DecoderOptions.None) }));
    const f = new Formatter(opts.att === true ? FormatterSyntax.Gas : FormatterSyntax.Intel);
    f.hexPrefix = '0x'; f.hexSuffix = ''; f.uppercaseHex = false; f.branchLeadingZeros = false; f.showBranchSize = false; f.spaceAfterOperandSeparator = true; f.leadingZeros = false;
    this.formatter = f;
  }

  /** The lines of record `r`: the instructions up to it, then its event line if it has one. */
  record(r: FlowRecord, emit: (line: string) => void): void {
    const ip = (BigInt(r.ipHi >>> 0) << 32n) | BigInt(r.ipLo >>> 0);
    const to = (BigInt(r.toHi >>> 0) << 32n) | BigInt(r.toLo >>> 0);
    switch (r.kind) {
      case 'enable':
        emit('[enabled]');
        this.cursor = r.hasIp ? ip : undefined;
        return;
      case 'branch':
        // The branch executed: listed with the straight run before it; then on at its target.
        this.run(ip, true, emit);
        this.cursor = r.hasTo ? to : undefined;
        return;
      case 'async':
        // The FUP's IP is where the event struck: that instruction had not run.
        this.run(ip, false, emit);
        emit(`[interrupt -> ${hexOf(to)}]`);
        this.cursor = to;
        return;
      case 'disable':
        if (r.hasIp) this.run(ip, false, emit);
        emit('[disabled]');
        this.cursor = undefined;
        return;
      case 'overflow':
        emit(r.hasIp ? `[overflow, resumed at ${hexOf(ip)}]` : '[overflow]');
        this.cursor = r.hasIp ? ip : undefined;
        return;
      case 'gap':
        emit(`[gap: ${r.bytes === null ? 'unknown' : r.bytes} bytes lost (${r.reason})]`);
        this.cursor = undefined;
        return;
      case 'error':
        emit(`[error ${r.error} at trace offset ${r.offset}]`);
        this.cursor = undefined;
        return;
    }
  }

  /** Lists from the cursor up to `stop` (with it when `inclusive`). */
  private run(stop: bigint, inclusive: boolean, emit: (line: string) => void): void {
    let at = this.cursor;
    if (at === undefined) return;
    for (let n = 0; ; n++) {
      if (at === stop && !inclusive) return;
      // Straight-line code only climbs: past the stop, it lay inside an instruction (or behind the cursor).
      if (at > stop) { emit(`[listing stops: ${hexOf(stop)} is not the start of an instruction after ${hexOf(this.cursor!)}]`); this.cursor = undefined; return; }
      if (n === this.opts.maxSteps) { emit(`[listing stops: more than ${this.opts.maxSteps} instructions without a branch]`); this.cursor = undefined; return; }
      const image = this.decoders.find((d) => at! >= d.base && at! < d.end);
      if (image === undefined) { emit(`[listing stops: ${hexOf(at)} lies in no image]`); this.cursor = undefined; return; }
      const d = image.decoder;
      d.ip = at;
      d.position = Number(at - image.base);
      d.decodeOut(this.insn);
      emit(this.line(at, this.insn, image));
      this.count++;
      if (at === stop) return;
      at = (at + BigInt(this.insn.length)) & MASK64;
    }
  }

  /** The line of `insn` at `ip`, in `image` (found by run()). */
  private line(ip: bigint, insn: Instruction, image: { readonly base: bigint; readonly bytes: Uint8Array }): string {
    const name = this.opts.symbol?.(ip);
    const parts = [ip.toString(16).padStart(16, '0')];
    if (name !== undefined) parts.push(`<${name}>`);
    if (this.opts.rawBytes === true) {
      const from = Number(ip - image.base);
      parts.push([...image.bytes.subarray(from, from + insn.length)].map((b) => b.toString(16).padStart(2, '0')).join(' ').padEnd(44));
    }
    if (this.opts.addressesOnly !== true) parts.push(this.formatter.format(insn));
    return parts.join('  ').trimEnd();
  }

  /** Frees the decoders and the formatter (iced-x86 objects live in WebAssembly memory). */
  dispose(): void {
    for (const d of this.decoders) d.decoder.free();
    this.formatter.free();
    this.insn.free();
  }
}
