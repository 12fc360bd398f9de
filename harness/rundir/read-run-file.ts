// One file of a run directory given as input (diff, replay, report, perf export), read within its
// bound: a file larger than ptlab writes, a device or a FIFO is refused, never waited on.
import { join } from 'node:path';
import { readBoundedFile } from '../files/read-input.js';
import { RUN_FILE_MAX_BYTES, type RunFile } from './run-files.js';

/**
 * `dir/file` of a run directory given as input (diff, replay, report): a regular file within its
 * bound (RUN_FILE_MAX_BYTES), read without waiting on a FIFO. ENOENT as it is; PtError('bad_config') otherwise.
 */
export function readRunFile(dir: string, file: RunFile): Promise<Buffer> {
  return readBoundedFile(join(dir, file), RUN_FILE_MAX_BYTES[file], `a run directory's ${file}`);
}
