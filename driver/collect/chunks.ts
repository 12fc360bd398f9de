// The collected stream as it is found: pieces of output regions in the order
// the CPU wrote them (docs/sdm/output.md §8), read from memory at collection time
// unless they had to be copied earlier (a region about to be reused).

/** One piece of the stream: `length` bytes at physical `addr`, or the copy made before reuse. */
export interface Chunk {
  readonly addr: bigint;
  readonly length: number;
  /** The bytes, when they were copied out before the region could be overwritten. */
  readonly data?: Uint8Array;
}

/** Chunks in write order, with the running stream offset. */
export class ChunkList {
  readonly items: Chunk[] = [];
  /** Bytes in all chunks: the offset in trace.pt where the next chunk starts. */
  bytes = 0;

  /** Copies out every chunk still only in memory (its region is about to be reused); `read` reads one. */
  async copyAll(read: (addr: bigint, length: number) => Promise<Uint8Array>): Promise<void> {
    for (const [i, c] of this.items.entries()) {
      if (c.data === undefined) this.items[i] = { ...c, data: await read(c.addr, c.length) };
    }
  }

  /** Appends a chunk; zero-length chunks are dropped. */
  push(c: Chunk): void {
    if (c.length <= 0) return;
    this.items.push(c);
    this.bytes += c.length;
  }
}
