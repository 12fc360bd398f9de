// Ground-truth recording in flow JSON Lines (docs/formats/flow-json.md): the path the
// modelled CPU executed while PacketEn=1. Off by default; the generator calls
// it only when a recorder is attached. Keys are written in the spec's order.
//
// A long run records hundreds of thousands of branches, kept alive until the run is judged.
// Held as text they were most of a suite's garbage-collector work, so the recorder keeps each
// record as three numbers and writes its text only when asked: `line(i)` for one record,
// `jsonl()` for truth.jsonl's bytes, `lines()` for a list of texts.
import { ipLe } from './events.js';

/** Branch kinds of docs/formats/flow-json.md (libipt's instruction classes). */
export type TruthBranchKind = 'jcc' | 'jmp' | 'call' | 'ret' | 'far.call' | 'far.ret' | 'far.jmp';

/** Record codes below BRANCH_KINDS.length are branch kinds; flag bits say what a jcc record has. */
const BRANCH_KINDS: readonly TruthBranchKind[] = ['jcc', 'jmp', 'call', 'ret', 'far.call', 'far.ret', 'far.jmp'];
const BRANCH_CODE: ReadonlyMap<string, number> = new Map(BRANCH_KINDS.map((k, i) => [k, i]));
const ASYNC = 8, ENABLE = 9, DISABLE = 10, OVERFLOW = 11;
/** What follows a branch record's IP: its kind. */
const BRANCH_KIND_TEXT = BRANCH_KINDS.map((k) => `","kind":"${k}"`);
/** Flag bits of a branch record's code: `taken` is written, and its value. */
const HAS_TAKEN = 0x40, TAKEN = 0x20;
const KIND_BITS = 0x1f;

/** Which records of a recording a run's truth.jsonl holds: from an index on, and/or those of one workload image. */
export interface TruthSelection {
  /** The first record (default 0). */
  readonly from?: number;
  /** Only the records of the workload at [base, base + bytes) (truth-owner.ts: an IP-less record goes with the one before it). */
  readonly owner?: { readonly base: number; readonly bytes: number };
}

/** What readers of a recording use (the generator alone records). */
export type TruthLog = Pick<TruthRecorder, 'length' | 'isBranch' | 'isJcc' | 'ipOf' | 'tscOf' | 'line' | 'lines' | 'select' | 'branches' | 'jsonl' | 'text'>;

/** Collects flow-json records in order. */
export class TruthRecorder {
  private codes = new Uint8Array(1024);
  /** Branch: ip; async: from; enable, disable, overflow: ip (NaN when absent). */
  private a = new Float64Array(1024);
  /** Branch: to (NaN when absent); async: to. */
  private b = new Float64Array(1024);
  /** The modelled TSC when the record's event retired (NaN without a clock). */
  private t = new Float64Array(1024);
  private n = 0;

  /** `now` reads the modelled TSC: each record is stamped with it (the truth `flow --time` is checked against). */
  constructor(private readonly now: (() => number) | null = null) {}

  /** Records so far. */
  get length(): number {
    return this.n;
  }

  private push(code: number, a: number, b: number): void {
    if (this.n === this.codes.length) {
      const grow = <T extends Uint8Array | Float64Array>(old: T, make: (n: number) => T): T => { const x = make(old.length * 2); x.set(old); return x; };
      this.codes = grow(this.codes, (n) => new Uint8Array(n));
      this.a = grow(this.a, (n) => new Float64Array(n));
      this.b = grow(this.b, (n) => new Float64Array(n));
      this.t = grow(this.t, (n) => new Float64Array(n));
    }
    this.codes[this.n] = code;
    this.a[this.n] = a;
    this.b[this.n] = b;
    this.t[this.n] = this.now === null ? NaN : this.now();
    this.n++;
  }

  /** One executed branch; `taken` only for jcc; `to` omitted when the trace cannot reveal it. */
  branch(ip: number, kind: TruthBranchKind, taken: boolean | undefined, to: number | undefined): void {
    const flags = taken === undefined ? 0 : taken ? HAS_TAKEN | TAKEN : HAS_TAKEN;
    this.push(BRANCH_CODE.get(kind)! | flags, ip, to ?? NaN);
  }

  /** An asynchronous transfer: FUP source, TIP target. */
  async(from: number, to: number): void {
    this.push(ASYNC, from, to);
  }

  /** Packet generation (re)enabled at `ip` (TIP.PGE). */
  enable(ip: number): void {
    this.push(ENABLE, ip, NaN);
  }

  /** Packet generation disabled; `ip` = the TIP.PGD's IP, absent when suppressed. */
  disable(ip?: number): void {
    this.push(DISABLE, ip ?? NaN, NaN);
  }

  /** Internal buffer overflow; tracing resumed at `ip` (the FUP after the OVF), if it did. */
  overflow(ip?: number): void {
    this.push(OVERFLOW, ip ?? NaN, NaN);
  }

  /** The modelled TSC at which record `i`'s event retired; NaN when the recorder has no clock. */
  tscOf(i: number): number {
    return this.t[i]!;
  }

  /** Record `i` is a conditional branch. */
  isJcc(i: number): boolean {
    return (this.codes[i]! & KIND_BITS) === BRANCH_CODE.get('jcc');
  }

  /** Record `i` is a branch record (flow-json: it starts with `ip`). */
  isBranch(i: number): boolean {
    return (this.codes[i]! & KIND_BITS) < BRANCH_KINDS.length;
  }

  /** The `ip` key of record `i`, or undefined when it has none (async records, a suppressed disable). */
  ipOf(i: number): number | undefined {
    const c = this.codes[i]!;
    const ip = this.a[i]!;
    return c === ASYNC || Number.isNaN(ip) ? undefined : ip;
  }

  /** Record `i` as flow-json text. */
  line(i: number): string {
    const out = new AsciiOut(128);
    this.write(out, i);
    return out.text();
  }

  /** Writes record `i` as flow-json (the one place a record's text is made). */
  private write(out: AsciiOut, i: number): void {
    const c = this.codes[i]!, a = this.a[i]!, b = this.b[i]!;
    const k = c & KIND_BITS;
    if (k < BRANCH_KINDS.length) {
      out.str('{"ip":"');
      out.ip(a);
      out.str(BRANCH_KIND_TEXT[k]!);
      if ((c & HAS_TAKEN) !== 0) out.str((c & TAKEN) !== 0 ? ',"taken":true' : ',"taken":false');
      if (!Number.isNaN(b)) { out.str(',"to":"'); out.ip(b); out.str('"'); }
      out.str('}');
    } else if (k === ASYNC) {
      out.str('{"kind":"async","from":"'); out.ip(a); out.str('","to":"'); out.ip(b); out.str('"}');
    } else {
      out.str(k === ENABLE ? '{"kind":"enable"' : k === DISABLE ? '{"kind":"disable"' : '{"kind":"overflow"');
      if (!Number.isNaN(a)) { out.str(',"ip":"'); out.ip(a); out.str('"'); }
      out.str('}');
    }
  }

  /** The texts of records [from, to). */
  lines(from = 0, to = this.n): string[] {
    const out: string[] = [];
    for (let i = from; i < to; i++) out.push(this.line(i));
    return out;
  }

  /** The indices of the records `sel` selects, in order. */
  select(sel: TruthSelection = {}): Int32Array {
    const from = sel.from ?? 0;
    const out = new Int32Array(Math.max(0, this.n - from));
    let k = 0;
    if (sel.owner === undefined) {
      for (let i = from; i < this.n; i++) out[k++] = i;
      return out;
    }
    const lo = sel.owner.base, last = sel.owner.base + sel.owner.bytes - 1;
    let mine = false;
    for (let i = from; i < this.n; i++) {
      const ip = this.ipOf(i);
      if (ip !== undefined) mine = ipLe(lo, ip) && ipLe(ip, last);
      if (mine) out[k++] = i;
    }
    return out.subarray(0, k);
  }

  /** Branch records among those `sel` selects. */
  branches(sel: TruthSelection = {}): number {
    let n = 0;
    for (const i of this.select(sel)) if (this.isBranch(i)) n++;
    return n;
  }

  /** truth.jsonl's bytes for the records `sel` selects: one record per line, newline-terminated (ASCII). */
  jsonl(sel: TruthSelection = {}): Uint8Array {
    const out = new AsciiOut(64 * 1024);
    for (const i of this.select(sel)) {
      this.write(out, i);
      out.str('\n');
    }
    return out.bytes();
  }

  /** truth.jsonl content: one record per line, newline-terminated. */
  text(): string {
    return this.n ? `${this.lines().join('\n')}\n` : '';
  }
}

/**
 * A growing ASCII buffer that writes IPs as flow-json hex (docs/formats/packet-json.md: `0x`,
 * lower case, no leading zeros, of the unsigned 64-bit address — events.ts ipHex) straight into
 * bytes, without a string per number.
 */
class AsciiOut {
  private buf: Buffer;
  private at = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }

  /** ASCII text. */
  str(s: string): void {
    this.room(s.length);
    for (let i = 0; i < s.length; i++) this.buf[this.at++] = s.charCodeAt(i);
  }

  /** `0x` and the hex digits of the unsigned address the IP number (a signed 64-bit value) stands for. */
  ip(ip: number): void {
    this.room(18);
    const hi = Math.floor(ip / 0x1_0000_0000);
    const lo = ip - hi * 0x1_0000_0000; // exact: ip is an integer
    this.buf[this.at++] = 0x30; // '0'
    this.buf[this.at++] = 0x78; // 'x'
    if (hi === 0) this.digits(lo, 0);
    else { this.digits(hi >>> 0, 0); this.digits(lo, 8); }
  }

  /** The hex digits of uint32 `v`, at least `width` of them. */
  private digits(v: number, width: number): void {
    let n = 1;
    while (n < 8 && v >>> (4 * n) !== 0) n++;
    if (n < width) n = width;
    for (let k = n - 1; k >= 0; k--) this.buf[this.at++] = HEX[(v >>> (4 * k)) & 15]!;
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.at);
  }

  text(): string {
    return this.buf.toString('latin1', 0, this.at);
  }
}

const HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
