// The model's memory-safety oracle, KASAN for PT (docs/design.md "The memory oracle"): the model
// knows which physical pages the driver owns (what its allocator handed out and has not taken
// back), and every way PT touches memory is checked against it — a trace write, a ToPA table
// fetch (the entry cache's read-ahead included), the output pointer loaded at TraceEn 0→1 (by
// WRMSR or XRSTORS), and a free of memory PT may still write while TraceEn=1. Silicon would write
// into someone else's memory there; the model records a `corrupt` event instead, which fails the
// run with its own verdict. Linux's arch/x86/events/intel/pt.c stops tracing before it frees the
// AUX buffer for this reason (pt_event_stop before pt_buffer_free_aux).

/** How PT reached memory the driver does not own. */
export type CorruptKind =
  /** The output engine wrote trace into it (docs/sdm/output.md §3, §4.3). */
  | 'trace-write'
  /** The ToPA engine read a table entry from it, when reached or read ahead into its cache (§4.3, §4.8). */
  | 'topa-read'
  /** TraceEn 0→1 loaded an output pointer (OUTPUT_BASE, by WRMSR or XRSTORS) that points into it (§4.1). */
  | 'output-base'
  /** The driver freed memory the CPU may still write (TraceEn=1, and the region reachable from its pointers). */
  | 'free-while-tracing';

export const CORRUPT_KINDS: readonly CorruptKind[] = ['trace-write', 'topa-read', 'output-base', 'free-while-tracing'];

/** One access of PT to memory it had no right to. */
export interface CorruptEvent {
  readonly kind: CorruptKind;
  /** The logical processor whose PT unit made the access (or may still make it). */
  readonly cpu: number;
  readonly addr: bigint;
  readonly length: number;
  /** What happened, in words (the table or region, the pointers). */
  readonly detail: string;
}

/** Which physical memory the driver owns now: allocated and not yet freed. */
export interface OwnedMemory {
  /** True when every byte of [addr, addr+length) lies in one region the driver owns. */
  owns(addr: bigint, length: number): boolean;
}

/** Events kept per target; a run reports the first ones and counts the rest. */
export const CORRUPT_EVENTS_KEPT = 64;

/** Collects the corrupt events of one model and tells whoever listens (the runner's transcript). */
export class MemoryOracle {
  readonly events: CorruptEvent[] = [];
  /** Events beyond CORRUPT_EVENTS_KEPT, counted only. */
  more = 0;
  private readonly listeners = new Set<(e: CorruptEvent) => void>();

  /** Records `e` and tells every listener. */
  report(e: CorruptEvent): void {
    if (this.events.length < CORRUPT_EVENTS_KEPT) this.events.push(e);
    else this.more++;
    for (const l of this.listeners) l(e);
  }

  /** Every event reported from now on goes to `fn` as well; returns the unsubscribe. */
  listen(fn: (e: CorruptEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Events reported so far, the uncounted ones included. */
  get count(): number {
    return this.events.length + this.more;
  }
}

/** Two half-open ranges [a, a+al) and [b, b+bl) overlap. */
export function overlaps(a: bigint, al: number, b: bigint, bl: number): boolean {
  return a < b + BigInt(bl) && b < a + BigInt(al);
}

/** "0x…+n" for details. */
export function span(addr: bigint, length: number): string {
  return `0x${addr.toString(16)}+${length}`;
}
