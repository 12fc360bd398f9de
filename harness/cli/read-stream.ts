// The bytes of a trace given on the command line, as an async sequence of chunks: a regular file,
// a FIFO, /dev/stdin, or `-` for standard input. Nothing here trusts a file's size (a pipe has
// none), so the end is where the reads end. A device is refused: /dev/zero or /dev/urandom never
// ends and is never a trace (a driver's device is read through a pipe: `ptlab dump - < DEVICE`).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { PtError } from '../../driver/base/errors.js';
import { systemWords } from '../text/strerror.js';

/** Chunks of at least `min` bytes (the last may be shorter) read from `path` (`-`: standard input). */
export async function* readChunks(path: string, min: number): AsyncGenerator<Uint8Array> {
  if (path !== '-') {
    const st = await stat(path);
    if (st.isCharacterDevice() || st.isBlockDevice()) {
      throw new PtError('bad_config', `${path}: a ${st.isBlockDevice() ? 'block' : 'character'} device, not a trace file (read a device through a pipe: - < ${path})`);
    }
  }
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

/**
 * Why an input could not be read, as `PATH: reason` (`ptlab dump: /x.pt: No such file or
 * directory`), or undefined when `e` is not an input's error (a bug, or the output's: rethrow it).
 */
export function inputProblem(path: string, e: unknown): string | undefined {
  if (e instanceof PtError && e.code === 'bad_config') return e.message;
  const code = (e as NodeJS.ErrnoException).code;
  if (typeof code !== 'string' || e instanceof PtError) return undefined;
  return `${inputName(path)}: ${systemWords(e)}`;
}
