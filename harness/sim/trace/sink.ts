// Where the generator's bytes go: the lead connects this to the output engine
// (ToPA / single range). `put` must consume the bytes before it returns (the
// buffer is reused).

/** Receives trace bytes in stream order; `buf[start, end)` is only valid during the call. */
export interface TraceSink {
  put(buf: Uint8Array, start: number, end: number): void;
  /**
   * A TraceStop (docs/sdm/README.md §4.4) set Stopped: the bytes so far have gone to `put`, and no
   * more come until TraceEn is set again. Optional: sinks that only collect bytes ignore it.
   */
  traceStopped?(): void;
}

/** Keeps every byte (tests, small runs). */
export class CollectingSink implements TraceSink {
  private chunks: Uint8Array[] = [];
  private size = 0;
  put(buf: Uint8Array, start: number, end: number): void {
    this.chunks.push(buf.slice(start, end));
    this.size += end - start;
  }
  /** Everything received so far, as one array. */
  bytes(): Uint8Array {
    const out = new Uint8Array(this.size);
    let o = 0;
    for (const c of this.chunks) { out.set(c, o); o += c.length; }
    return out;
  }
  /** Forgets what was received. */
  clear(): void { this.chunks = []; this.size = 0; }
}

/** Counts bytes only (benchmarks). */
export class CountingSink implements TraceSink {
  bytes = 0;
  put(_buf: Uint8Array, start: number, end: number): void { this.bytes += end - start; }
}
