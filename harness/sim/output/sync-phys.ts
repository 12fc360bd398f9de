// The memory access the output engines need: synchronous, because the packet
// generator's sink must consume its bytes before it returns (trace/sink.ts) and
// a TraceEn 1→0 writes everything out before the pointers are written back
// (spec/msrs.md §3.4). SparsePhysMemory provides it.

/** Synchronous physical reads and writes; both throw PtError('bad_address') outside memory. */
export interface SyncPhysMemory {
  readNow(addr: bigint, length: number): Uint8Array;
  writeNow(addr: bigint, data: Uint8Array): void;
}
