// The error of a perf.data that cannot be read: truncated, corrupt, or of a kind ptlab does not
// read. One line, with the byte it was found at; the CLI prints it and exits 2 (inputProblem()
// in harness/cli/read-stream.ts takes every PtError('bad_config') as the input's problem).
import { PtError } from '../../driver/base/errors.js';

/** A perf.data that is not what its header or a record says it is. */
export class PerfDataError extends PtError {
  override readonly name = 'PerfDataError';
  /** `at`: the file offset of the field or record at fault. */
  constructor(readonly at: number, readonly reason: string) {
    super('bad_config', `${reason} (at byte ${at})`);
  }
}
