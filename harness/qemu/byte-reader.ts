// Buffered reading from a byte stream for a single reader: whole lines, or skipping up to a
// marker byte (the guest agent's 0xFF sync delimiter, docs/qemu.md §3).
import { abortError } from '../link/queue.js';

/** Bytes pushed by a socket, read as lines or skipped to a marker. */
export class ByteReader {
  private buf: Buffer = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  private ended: Error | undefined;

  /** Appends received bytes. */
  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    this.notify();
  }

  /** Marks the stream ended; reads that need more bytes reject with `error`. */
  end(error: Error): void {
    this.ended = error;
    this.notify();
  }

  /** Drops everything buffered. */
  discard(): void {
    this.buf = Buffer.alloc(0);
  }

  /** The next line without its line end (`\n`, optionally preceded by `\r`). */
  async readLine(signal?: AbortSignal): Promise<string> {
    for (;;) {
      const nl = this.buf.indexOf(0x0a);
      if (nl >= 0) {
        const line = this.buf.subarray(0, nl).toString('utf8');
        this.buf = this.buf.subarray(nl + 1);
        return line.endsWith('\r') ? line.slice(0, -1) : line;
      }
      await this.more(signal);
    }
  }

  /** Discards bytes up to and including the next `marker` byte. */
  async skipPast(marker: number, signal?: AbortSignal): Promise<void> {
    for (;;) {
      const at = this.buf.indexOf(marker);
      if (at >= 0) {
        this.buf = this.buf.subarray(at + 1);
        return;
      }
      this.buf = Buffer.alloc(0);
      await this.more(signal);
    }
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private more(signal: AbortSignal | undefined): Promise<void> {
    if (this.ended !== undefined) return Promise.reject(this.ended);
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.wake = undefined;
        reject(abortError(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.wake = () => {
        signal?.removeEventListener('abort', onAbort);
        if (this.ended !== undefined) reject(this.ended);
        else resolve();
      };
    });
  }
}
