// The memory access the output engines need: synchronous, because the packet
// generator's sink must consume its bytes before it returns (trace/sink.ts) and
// a TraceEn 1→0 writes everything out before the pointers are written back
// (docs/sdm/msrs.md §3.4). SparsePhysMemory provides it.
import { PtError } from '../../../driver/base/errors.js';

/** Synchronous physical reads and writes; both throw PtError('bad_address') outside memory. */
export interface SyncPhysMemory {
  /** With `into`, the bytes land in its first `length` bytes, which are returned (ReadOpts.into). */
  readNow(addr: bigint, length: number, into?: Uint8Array): Uint8Array;
  writeNow(addr: bigint, data: Uint8Array): void;
}

/** The little-endian 64-bit word at `addr` (a ToPA entry), or undefined where `phys` backs nothing. */
export function readU64(phys: SyncPhysMemory, addr: bigint): bigint | undefined {
  try {
    const b = phys.readNow(addr, 8);
    return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
  } catch (e) {
    if (e instanceof PtError && e.code === 'bad_address') return undefined;
    throw e;
  }
}
