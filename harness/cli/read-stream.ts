// The bytes of a trace given on the command line, as an async sequence of chunks: a regular file,
// a FIFO, /dev/stdin, or `-` for standard input. Nothing here trusts a file's size (a pipe has
// none), so the end is where the reads end. A device is refused: /dev/zero or /dev/urandom never
// ends and is never a trace (a driver's device is read through a pipe: `ptlab dump - < DEVICE`).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { PtError } from '../../driver/base/errors.js';
import { systemWords } from '../text/strerror.js';
import type { TraceRange } from './trace-range.js';

/**
 * Chunks of at least `min` bytes (the last may be shorter) read from `path` (`-`: standard input);
 * with `range`, only its bytes (a regular file's: trace-range.ts), refused when the file is shorter.
 */
export async function* readChunks(path: string, min: number, range?: Omit<TraceRange, 'path'>): AsyncGenerator<Uint8Array> {
  const ranged = range !== undefined && (range.from > 0 || range.to !== undefined);
  if (path !== '-') {
    const st = await stat(path);
    if (st.isCharacterDevice() || st.isBlockDevice()) {
      throw new PtError('bad_config', `${path}: a ${st.isBlockDevice() ? 'block' : 'character'} device, not a trace file (read a device through a pipe: - < ${path})`);
    }
    // ptdump's bounds (load_file): the start inside the file, the end not past it.
    if (ranged && st.isFile() && (range.from >= st.size || (range.to ?? 0) > st.size)) {
      throw new PtError('bad_config', `${path}: ${st.size} bytes: the range ${range.from}${range.to === undefined ? '' : `-${range.to}`} lies past its end`);
    }
    if (ranged && !st.isFile()) throw new PtError('bad_config', `${path}: a range is read from a regular file only`);
  } else if (ranged) {
    throw new PtError('bad_config', 'standard input: a range is read from a regular file only');
  }
  const part = ranged ? { start: range.from, ...(range.to === undefined ? {} : { end: range.to - 1 }) } : {};
  const src: AsyncIterable<Buffer> = path === '-' ? process.stdin : createReadStream(path, { highWaterMark: min, ...part });
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
