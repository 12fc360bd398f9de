// The memory access the output engines need: synchronous, because the packet
// generator's sink must consume its bytes before it returns (trace/sink.ts) and
// a TraceEn 1→0 writes everything out before the pointers are written back
// (docs/sdm/msrs.md §3.4). SparsePhysMemory provides it.

/** Synchronous physical reads and writes; both throw PtError('bad_address') outside memory. */
export interface SyncPhysMemory {
  /** With `into`, the bytes land in its first `length` bytes, which are returned (ReadOpts.into). */
  readNow(addr: bigint, length: number, into?: Uint8Array): Uint8Array;
  writeNow(addr: bigint, data: Uint8Array): void;
}
