// Output built as bytes, not strings: dump and flow print millions of short ASCII lines, and
// making a string per line (then joining and encoding them) costs more than decoding the trace.
// An AsciiOut fills one buffer with the bytes of whole lines and hands it over once it is full,
// so a line never straddles two hand-overs.

const HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/** The bytes of an ASCII string (for the constant pieces of a line). */
export function ascii(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0) & 0x7f);
}

/**
 * A constant piece of a line as little-endian int32 words, zero-padded: putPiece copies it four
 * bytes per store, where a byte loop costs one store per byte and TypedArray.set a call.
 */
export class Piece {
  readonly words: Int32Array;
  constructor(readonly text: string) {
    const bytes = ascii(text);
    const padded = new Uint8Array((bytes.length + 3) & ~3);
    padded.set(bytes);
    this.words = new Int32Array(padded.buffer);
  }
}

/** Bytes past a line's end that putPiece may overwrite (the padding of its last word). */
export const PIECE_SLACK = 3;

/** A buffer of output lines; `emit` gets each full buffer (valid only during the call). */
export class AsciiOut {
  private readonly buf: Uint8Array;
  /** The same bytes, for putPiece's word stores. */
  readonly view: DataView;
  private pos = 0;
  /** Where the line being written started (a hand-over never splits it). */
  private lineStart = 0;

  constructor(private readonly emit: (bytes: Uint8Array) => void, capacity = 1 << 20) {
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer);
  }

  /** Room for `n` more bytes of the current line (hands over the finished lines when needed). */
  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const line = this.buf.subarray(this.lineStart, this.pos);
    if (this.lineStart > 0) this.emit(this.buf.subarray(0, this.lineStart));
    if (line.length + n > this.buf.length) throw new RangeError(`AsciiOut: a line longer than ${this.buf.length} bytes`);
    this.buf.copyWithin(0, this.lineStart, this.pos);
    this.pos = line.length;
    this.lineStart = 0;
  }

  /** A whole line given as an ASCII string, its newline added (the rare lines: JSON and hex only). */
  line(s: string): void {
    this.room(s.length + 1);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < s.length; i++) buf[p++] = s.charCodeAt(i);
    buf[p++] = 10;
    this.end(p);
  }

  /** The buffer a fast writer fills between `begin` and `end` (with the put* helpers below). */
  get buffer(): Uint8Array {
    return this.buf;
  }

  /** Room for a whole line of at most `max` bytes (and PIECE_SLACK more); returns where it starts in `buffer`. */
  begin(max: number): number {
    this.room(max + PIECE_SLACK);
    return this.pos;
  }

  /** Ends the line written from `begin`'s position to `p` (its newline included). */
  end(p: number): void {
    this.pos = p;
    this.lineStart = p;
  }

  /** Hands over every finished line. */
  flush(): void {
    if (this.lineStart > 0) this.emit(this.buf.subarray(0, this.lineStart));
    this.buf.copyWithin(0, this.lineStart, this.pos);
    this.pos -= this.lineStart;
    this.lineStart = 0;
  }
}

// Unchecked writers for a line made room for with AsciiOut.begin: each writes at `p` and returns
// the position after what it wrote.

/** Constant bytes: a loop for a few, TypedArray.set (a memcpy, about 20 ns) beyond 8. */
export function putBytes(buf: Uint8Array, p: number, b: Uint8Array): number {
  const n = b.length;
  if (n > 8) { buf.set(b, p); return p + n; }
  for (let i = 0; i < n; i++) buf[p++] = b[i]!;
  return p;
}

/** A constant piece, four bytes per store; may write up to PIECE_SLACK bytes of padding after it. */
export function putPiece(dv: DataView, p: number, piece: Piece): number {
  const w = piece.words;
  for (let k = 0; k < w.length; k++) dv.setInt32(p + 4 * k, w[k]!, true);
  return p + piece.text.length;
}

/** Two decimal digits of 0..99, by value. */
const PAIRS = new Uint8Array(200);
for (let i = 0; i < 100; i++) { PAIRS[2 * i] = 48 + Math.floor(i / 10); PAIRS[2 * i + 1] = 48 + (i % 10); }

/** Decimal digits of a non-negative integer below 2^53. */
function decDigits(n: number): number {
  if (n < 1e4) return n < 10 ? 1 : n < 100 ? 2 : n < 1e3 ? 3 : 4;
  if (n < 1e8) return n < 1e5 ? 5 : n < 1e6 ? 6 : n < 1e7 ? 7 : 8;
  let d = 8;
  for (let x = Math.floor(n / 1e8); x >= 1; x = Math.floor(x / 10)) d++;
  return d;
}

/** A non-negative integer (< 2^53) in decimal, two digits at a time (int32 arithmetic below 2^31). */
export function putDec(buf: Uint8Array, p: number, n: number): number {
  const end = p + decDigits(n);
  let q = end;
  let x = n;
  while (x > 0x7fff_ffff) {
    const y = Math.floor(x / 100), r = x - y * 100;
    buf[--q] = PAIRS[2 * r + 1]!; buf[--q] = PAIRS[2 * r]!;
    x = y;
  }
  x |= 0;
  while (x >= 100) {
    const y = (x / 100) | 0, r = x - y * 100;
    buf[--q] = PAIRS[2 * r + 1]!; buf[--q] = PAIRS[2 * r]!;
    x = y;
  }
  if (x >= 10) { buf[--q] = PAIRS[2 * x + 1]!; buf[--q] = PAIRS[2 * x]!; } else buf[--q] = 48 + x;
  return end;
}

/** `0x…` lowercase hex of hi:lo (uint32 halves), no leading zeros. */
export function putHex64(buf: Uint8Array, p: number, lo: number, hi: number): number {
  buf[p++] = 48; buf[p++] = 120;
  lo >>>= 0; hi >>>= 0;
  if (hi !== 0) {
    let shift = 28;
    while ((hi >>> shift) === 0) shift -= 4;
    for (; shift >= 0; shift -= 4) buf[p++] = HEX[(hi >>> shift) & 0xf]!;
    for (let s = 28; s >= 0; s -= 4) buf[p++] = HEX[(lo >>> s) & 0xf]!;
    return p;
  }
  let shift = 28;
  while (shift > 0 && (lo >>> shift) === 0) shift -= 4;
  for (; shift >= 0; shift -= 4) buf[p++] = HEX[(lo >>> shift) & 0xf]!;
  return p;
}
