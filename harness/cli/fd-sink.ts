// Standard output as a blocking file descriptor: the `ptlab` command writes with writeSync on fd 1
// and never opens process.stdout, so
//   - a slow reader slows the writer down (the kernel blocks the write): memory stays bounded
//     however much a command prints, to a file, a pipe or a terminal;
//   - a reader that goes away (`ptlab dump big.pt | head -1`) ends the command quietly: EPIPE
//     (or EIO from a terminal that hung up) closes the sink, and the next write throws
//     OutputClosedError, which the command line treats as a normal end (nothing more is wanted);
//   - a descriptor left non-blocking by whoever started us (EAGAIN) is waited on, briefly;
//   - any other write error (ENOSPC on a full disk or /dev/full, EDQUOT, EFBIG) closes the sink too
//     and throws OutputFailedError: the output was lost, which the command line says (exit 4).
import { writeSync } from 'node:fs';

/**
 * A write to standard output failed for another reason than a reader that went away (a full disk,
 * /dev/full, a quota): the output is lost, which `ptlab` reports as exit 4 with one line, never as
 * its own failure.
 */
export class OutputFailedError extends Error {
  readonly code = 'output_failed';
  constructor(readonly fd: number, readonly errno: string, options?: ErrorOptions) {
    super(`cannot write to ${fd === 1 ? 'standard output' : fd === 2 ? 'standard error' : `fd ${fd}`}: ${errno}`, options);
    this.name = 'OutputFailedError';
  }
}

/** True for the errors a write to the command's own output throws (the command line handles them, no command does). */
export function isOutputError(e: unknown): e is OutputClosedError | OutputFailedError {
  return e instanceof OutputClosedError || e instanceof OutputFailedError;
}

/** Thrown by a write after the reader went away: not a failure, the output is simply not wanted. */
export class OutputClosedError extends Error {
  readonly code = 'output_closed';
  constructor(readonly fd: number) {
    super(`fd ${fd}: the reader closed the pipe`);
    this.name = 'OutputClosedError';
  }
}

/**
 * How long to wait before retrying a write that would have blocked on a non-blocking descriptor: a
 * pipe's reader frees its 64 KiB in microseconds, so the wait starts at 20 µs and doubles up to 1 ms
 * while the reader stays behind (a 1 ms wait every time made `dump --json | cat` twice as slow).
 */
const EAGAIN_WAIT_MIN_MS = 0.02, EAGAIN_WAIT_MAX_MS = 1;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

export class FdSink {
  #closed = false;

  constructor(readonly fd: number) {}

  /** True once the reader went away. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Writes all of `s`; throws OutputClosedError once the reader is gone. */
  write(s: string): void {
    this.writeBytes(Buffer.from(s, 'utf8'));
  }

  /** Writes all of `bytes`; throws OutputClosedError once the reader is gone, OutputFailedError when the write failed. */
  writeBytes(bytes: Uint8Array): void {
    if (this.#closed) throw new OutputClosedError(this.fd);
    let buf = bytes;
    let wait = EAGAIN_WAIT_MIN_MS;
    while (buf.length > 0) {
      let n: number;
      try {
        n = writeSync(this.fd, buf);
        wait = EAGAIN_WAIT_MIN_MS;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN') { Atomics.wait(sleeper, 0, 0, wait); wait = Math.min(EAGAIN_WAIT_MAX_MS, wait * 2); continue; }
        // EPIPE: the reader closed the pipe; EIO: the terminal hung up (SIGHUP follows).
        if (code === 'EPIPE' || code === 'EIO') { this.#closed = true; throw new OutputClosedError(this.fd); }
        this.#closed = true;
        throw new OutputFailedError(this.fd, code ?? String(e), { cause: e });
      }
      buf = buf.subarray(n);
    }
  }
}
