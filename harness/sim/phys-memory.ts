// A sparse guest-physical address space for the model: RAM of a configurable
// size, stored as a Map of 4 KiB pages that exist only once written, and a
// first-fit allocator of size-aligned, physically contiguous regions
// (driver/target.ts PhysMemory). The driver's reads and writes (the async API)
// reach only regions it allocated, as on a real target, where the helper
// refuses anything outside the module's buffers; the CPU's own accesses (the
// sync API) reach all of RAM, and the memory oracle asks `owns` before each.
import { AllocationError, PtError, throwIfAborted } from '../../driver/base/errors.js';
import type { CallOpts, PhysMemory, PhysRegion, ReadOpts } from '../../driver/target.js';
import { readDestination } from '../../driver/read-into.js';

export const PAGE_SIZE = 4096;

export interface SparsePhysMemoryOptions {
  /** Bytes of RAM, from physical address 0. Default 1 GiB. */
  readonly ramSize?: number;
  /** Largest single allocation (a power of two). Default 4 MiB, like Linux's largest buddy order. */
  readonly maxContiguous?: number;
  /** Low memory never handed out by `alloc` (still readable/writable), so 0 is never a region. Default 1 MiB. */
  readonly reservedLow?: number;
}

interface Span { start: number; end: number }

const isPow2 = (n: number): boolean => Number.isSafeInteger(n) && n > 0 && Number.isInteger(Math.log2(n));
const alignUp = (v: number, a: number): number => Math.ceil(v / a) * a;

/** Sparse RAM with an allocator; reads of never-written bytes return 0. */
export class SparsePhysMemory implements PhysMemory {
  readonly ramSize: number;
  readonly maxContiguous: number;
  private readonly pages = new Map<number, Uint8Array>();
  private freeSpans: Span[];
  private readonly allocated = new Map<number, Span>();
  /** The span `owns` matched last (trace writes land in one region for a while). */
  private lastOwned: Span | undefined;
  private closed = false;

  constructor(o: SparsePhysMemoryOptions = {}) {
    this.ramSize = o.ramSize ?? 2 ** 30;
    this.maxContiguous = o.maxContiguous ?? 4 * 2 ** 20;
    const low = o.reservedLow ?? 2 ** 20;
    if (!isPow2(this.maxContiguous)) throw new PtError('bad_config', `maxContiguous ${this.maxContiguous} is not a power of two`);
    if (this.ramSize % PAGE_SIZE !== 0 || low % PAGE_SIZE !== 0 || low > this.ramSize) {
      throw new PtError('bad_config', `RAM size ${this.ramSize} and reserved low memory ${low} must be whole pages`);
    }
    this.freeSpans = [{ start: low, end: this.ramSize }];
  }

  /** Bytes currently allocated (page-rounded). */
  get allocatedBytes(): number {
    let n = 0;
    for (const s of this.allocated.values()) n += s.end - s.start;
    return n;
  }

  async alloc(size: number, align: number, opts?: CallOpts): Promise<PhysRegion> {
    this.enter(opts);
    return this.allocNow(size, align);
  }

  /** `alloc` without the promise. */
  allocNow(size: number, align: number): PhysRegion {
    if (!Number.isSafeInteger(size) || size <= 0) throw new AllocationError(size, align, this.maxContiguous, 'size must be a positive integer');
    if (!isPow2(align)) throw new AllocationError(size, align, this.maxContiguous, 'alignment must be a power of two');
    if (size > this.maxContiguous) throw new AllocationError(size, align, this.maxContiguous, 'larger than the largest contiguous block');
    const len = alignUp(size, PAGE_SIZE);
    const a = Math.max(align, PAGE_SIZE);
    for (let i = 0; i < this.freeSpans.length; i++) {
      const f = this.freeSpans[i]!;
      const start = alignUp(f.start, a);
      if (start + len > f.end) continue;
      const rest: Span[] = [];
      if (start > f.start) rest.push({ start: f.start, end: start });
      if (start + len < f.end) rest.push({ start: start + len, end: f.end });
      this.freeSpans.splice(i, 1, ...rest);
      this.allocated.set(start, { start, end: start + len });
      for (let p = start; p < start + len; p += PAGE_SIZE) this.pages.delete(p / PAGE_SIZE); // zero-fill
      return { base: BigInt(start), size };
    }
    throw new AllocationError(size, align, this.maxContiguous, 'no free block of that size and alignment');
  }

  async free(region: PhysRegion, opts?: CallOpts): Promise<void> {
    this.enter(opts);
    this.freeNow(region);
  }

  /** `free` without the promise; PtError('bad_address') for a region `alloc` did not return. */
  freeNow(region: PhysRegion): void {
    const start = Number(region.base);
    const span = this.allocated.get(start);
    if (!span || alignUp(region.size, PAGE_SIZE) !== span.end - span.start) {
      throw new PtError('bad_address', `0x${region.base.toString(16)} (+${region.size}) is not an allocated region`);
    }
    this.allocated.delete(start);
    this.freeSpans.push(span);
    this.freeSpans.sort((x, y) => x.start - y.start);
    const merged: Span[] = [];
    for (const s of this.freeSpans) {
      const last = merged[merged.length - 1];
      if (last && last.end === s.start) last.end = s.end;
      else merged.push({ ...s });
    }
    this.freeSpans = merged;
  }

  /** The driver's read: only inside a region it allocated (PtError 'bad_address' elsewhere). */
  async read(addr: bigint, length: number, opts?: ReadOpts): Promise<Uint8Array> {
    this.enter(opts);
    this.checkOwned(addr, length);
    return this.readNow(addr, length, opts?.into);
  }

  /** The driver's write: only inside a region it allocated (PtError 'bad_address' elsewhere). */
  async write(addr: bigint, data: Uint8Array, opts?: CallOpts): Promise<void> {
    this.enter(opts);
    this.checkOwned(addr, data.length);
    this.writeNow(addr, data);
  }

  /** True when [addr, addr+length) lies inside one allocated region. */
  owns(addr: bigint, length: number): boolean {
    const a = Number(addr), end = a + length;
    const last = this.lastOwned;
    if (last && a >= last.start && end <= last.end && this.allocated.get(last.start) === last) return true;
    for (const s of this.allocated.values()) {
      if (a >= s.start && end <= s.end) { this.lastOwned = s; return true; }
    }
    return false;
  }

  private checkOwned(addr: bigint, length: number): void {
    this.check(addr, length);
    if (!this.owns(addr, length)) {
      throw new PtError('bad_address', `physical access 0x${addr.toString(16)} (+${length}) is outside every region allocated from this memory`);
    }
  }

  /** `read` without the promise. */
  readNow(addr: bigint, length: number, into?: Uint8Array): Uint8Array {
    const start = this.check(addr, length);
    const out = readDestination(length, into);
    this.chunks(start, length, (page, off, pos, n) => {
      const p = this.pages.get(page);
      if (p) out.set(p.subarray(off, off + n), pos);
      else if (into !== undefined) out.fill(0, pos, pos + n); // an untouched page reads zeros
    });
    return out;
  }

  /** `write` without the promise. */
  writeNow(addr: bigint, data: Uint8Array): void {
    const start = this.check(addr, data.length);
    this.chunks(start, data.length, (page, off, pos, n) => {
      let p = this.pages.get(page);
      if (!p) { p = new Uint8Array(PAGE_SIZE); this.pages.set(page, p); }
      p.set(data.subarray(pos, pos + n), off);
    });
  }

  /** Later calls through the async API fail with PtError('bad_state') (the target was disposed). */
  close(): void {
    this.closed = true;
  }

  private enter(opts: CallOpts | undefined): void {
    if (this.closed) throw new PtError('bad_state', 'physical memory of a disposed target');
    throwIfAborted(opts?.signal);
  }

  /** True when [addr, addr+length) lies inside RAM. */
  contains(addr: bigint, length: number): boolean {
    return addr >= 0n && length >= 0 && addr + BigInt(length) <= BigInt(this.ramSize);
  }

  private check(addr: bigint, length: number): number {
    if (!Number.isSafeInteger(length) || length < 0 || !this.contains(addr, length)) {
      throw new PtError('bad_address', `physical access 0x${addr.toString(16)} (+${length}) is outside RAM [0, 0x${this.ramSize.toString(16)})`);
    }
    return Number(addr);
  }

  private chunks(start: number, length: number, f: (page: number, off: number, pos: number, n: number) => void): void {
    let pos = 0;
    while (pos < length) {
      const a = start + pos;
      const page = Math.floor(a / PAGE_SIZE);
      const off = a - page * PAGE_SIZE;
      const n = Math.min(PAGE_SIZE - off, length - pos);
      f(page, off, pos, n);
      pos += n;
    }
  }
}
