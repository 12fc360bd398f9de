// Reading ptlab's input files with a bound suited to what each is (a code image, a sequence file,
// an inventory, a run directory's result.json): an input that goes on — /dev/zero, a runaway
// pipe, a wrong file — is refused once it passes the bound, holding no more than that in memory.
import { constants, createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { PtError } from '../../driver/base/errors.js';
import { systemWords } from '../text/strerror.js';

/** An input that holds more bytes than what it is ever needs: read no further. */
export class InputTooLargeError extends PtError {
  override readonly name = 'InputTooLargeError';
  constructor(readonly path: string, readonly max: number, readonly what: string) {
    super('bad_config', `${path === '-' ? 'standard input' : path} holds more than ${max} bytes, more than ${what} ever does: is it the right file?`);
  }
}

/**
 * All of `path` (a regular file, a FIFO, a device, `-` for standard input), at most `max` bytes;
 * InputTooLargeError past that. A FIFO or a pipe is read as it comes, so `<(…)` works.
 */
export async function readBounded(path: string, max: number, what: string): Promise<Buffer> {
  const src: AsyncIterable<Buffer> = path === '-' ? process.stdin : createReadStream(path, { highWaterMark: Math.min(max + 1, 1 << 20) });
  const parts: Buffer[] = [];
  let held = 0;
  for await (const c of src) {
    held += c.length;
    if (held > max) {
      if ('destroy' in src && typeof src.destroy === 'function') (src as { destroy(): void }).destroy();
      throw new InputTooLargeError(path, max, what);
    }
    parts.push(c);
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, held);
}

/**
 * The bytes of the regular file at `path`, at most `max` bytes (a FIFO or a device is refused, not
 * read without end); PtError('bad_config') otherwise. A missing file throws its ENOENT as it is.
 */
export async function readBoundedFile(path: string, max: number, what: string): Promise<Buffer> {
  let f;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below, as not a regular file).
    f = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw e;
    throw new PtError('bad_config', `${path}: ${systemWords(e)}`, { cause: e });
  }
  try {
    const st = await f.stat();
    if (!st.isFile()) throw new PtError('bad_config', `${path} is not a regular file`);
    if (st.size > max) throw new InputTooLargeError(path, max, what);
    // One byte more than the file held: a file still growing past the bound is caught too.
    const want = st.size + 1;
    const buf = Buffer.alloc(want);
    const { bytesRead } = await f.read(buf, 0, want, 0);
    if (bytesRead > max) throw new InputTooLargeError(path, max, what);
    return buf.subarray(0, bytesRead);
  } finally {
    await f.close();
  }
}

/** The text (UTF-8) of the regular file at `path`, at most `max` bytes: readBoundedFile. */
export async function readBoundedText(path: string, max: number, what: string): Promise<string> {
  return (await readBoundedFile(path, max, what)).toString('utf8');
}
