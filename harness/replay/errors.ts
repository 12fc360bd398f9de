// Typed errors of `ptlab replay` (docs/replay.md): a run that cannot be replayed is refused before
// or at the operation that cannot be issued again, never half-guessed.
import { PtError } from '../../driver/base/errors.js';

/** A recorded run ptlab cannot replay: no transcript, a workload with no recipe, an area not recorded. */
export class NotReplayableError extends PtError {
  override readonly name = 'NotReplayableError';
  constructor(
    message: string,
    /** The transcript line (1-based) it could not issue again, when it is one line. */
    readonly line?: number,
  ) {
    super('unsupported', line === undefined ? message : `transcript line ${line}: ${message}`);
  }
}
