// The bytes of a trace given on the command line, as an async sequence of chunks: a regular file,
// a FIFO, /dev/stdin, or `-` for standard input. Nothing here trusts a file's size (a pipe has
// none), so the end is where the reads end.
import { createReadStream } from 'node:fs';

/** Chunks of at least `min` bytes (the last may be shorter) read from `path` (`-`: standard input). */
export async function* readChunks(path: string, min: number): AsyncGenerator<Uint8Array> {
  const src: AsyncIterable<Buffer> = path === '-' ? process.stdin : createReadStream(path, { highWaterMark: min });
  let parts: Buffer[] = [];
  let held = 0;
  for await (const b of src) {
    parts.push(b);
    held += b.length;
    if (held >= min) {
      yield parts.length === 1 ? parts[0]! : Buffer.concat(parts, held);
      parts = [];
      held = 0;
    }
  }
  if (held > 0) yield parts.length === 1 ? parts[0]! : Buffer.concat(parts, held);
}

/** What `path` names in messages. */
export function inputName(path: string): string {
  return path === '-' ? 'standard input' : path;
}
