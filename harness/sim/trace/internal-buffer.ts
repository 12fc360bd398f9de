// The finite internal packet buffer between the packet generator and the
// output engine (docs/sdm/README.md §1 diagram; docs/sdm/packets.md §12). It drains at
// a modelled rate (bytes per core cycle); a packet that does not fit is
// dropped, which starts an overflow. The model resumes (writes OVF) once the
// buffer has drained to `resumeAt` bytes. Bytes are handed to the sink as soon
// as they are accepted: only the occupancy is modelled, never the bytes.

/** Capacity and drain rate of the internal buffer. */
export interface InternalBufferConfig {
  /** Bytes the buffer holds. */
  readonly capacity: number;
  /** Bytes drained to the output per core cycle; Infinity = never overflows (the default). */
  readonly drainBytesPerCycle: number;
  /** Occupancy at or below which an overflow clears (default 0: fully drained). */
  readonly resumeAt?: number;
}

/** The default: an infinitely fast drain (no overflow ever). */
export const UNLIMITED_BUFFER: InternalBufferConfig = { capacity: Infinity, drainBytesPerCycle: Infinity };

/** Occupancy bookkeeping of the internal buffer, in modelled cycles. */
export class InternalBuffer {
  readonly capacity: number;
  readonly rate: number;
  readonly resumeAt: number;
  /** Bytes dropped inside the CPU because the buffer was full (losses.json `dropped`). */
  dropped = 0;
  /** Bytes accepted (and passed on to the output). */
  accepted = 0;
  private occ = 0;
  private at = 0;

  constructor(cfg: InternalBufferConfig = UNLIMITED_BUFFER) {
    if (!(cfg.capacity > 0) || !(cfg.drainBytesPerCycle > 0)) throw new RangeError('internal buffer: capacity and drain rate must be positive');
    this.capacity = cfg.capacity;
    this.rate = cfg.drainBytesPerCycle;
    this.resumeAt = cfg.resumeAt ?? 0;
  }

  /** True when the buffer can never fill (no bookkeeping needed). */
  get unlimited(): boolean { return this.rate === Infinity || this.capacity === Infinity; }

  /** Bytes held at cycle `now` (after draining since the last update). */
  occupancy(now: number): number {
    if (this.unlimited) return 0;
    if (now > this.at) {
      this.occ = Math.max(0, this.occ - (now - this.at) * this.rate);
      this.at = now;
    }
    return this.occ;
  }

  /** Free bytes at cycle `now`. */
  free(now: number): number {
    return this.unlimited ? Infinity : this.capacity - this.occupancy(now);
  }

  /** Takes `n` bytes at cycle `now` (the caller checked `free`). */
  accept(n: number, now: number): void {
    this.accepted += n;
    if (!this.unlimited) { this.occupancy(now); this.occ += n; }
  }

  /** Counts `n` bytes lost to the overflow. */
  drop(n: number): void {
    this.dropped += n;
  }

  /** True when an overflow may clear at cycle `now`. */
  canResume(now: number): boolean {
    return this.occupancy(now) <= this.resumeAt;
  }

  /** TraceEn 1→0: every buffered byte is written out (docs/sdm/msrs.md §3.4). */
  flush(now: number): void {
    this.occupancy(now);
    this.occ = 0;
  }
}
