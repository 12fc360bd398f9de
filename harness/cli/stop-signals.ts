// The stop signals for a command that works step by step (replay, merge): the first SIGINT, SIGTERM
// or SIGHUP aborts `signal`, so the command stops between two steps and cleans up (disposes of its
// target, leaves no half-written file); a second one exits at once with the first one's status.
// `ptlab run` has its own two-stage stop (after the current run, then the target at once).
import { STOP_SIGNALS, type StopSignal } from './exit-codes.js';
import type { CliIo } from './main.js';

export class StopOnSignal implements Disposable {
  private readonly controller = new AbortController();
  /** The first signal received, if any. */
  first: StopSignal | undefined;
  private readonly handlers = new Map<StopSignal, () => void>();

  constructor(io: Pick<CliIo, 'err'>, command: string, what: string) {
    for (const sig of Object.keys(STOP_SIGNALS) as StopSignal[]) {
      const h = (): void => {
        if (this.first !== undefined) process.exit(STOP_SIGNALS[this.first]);
        this.first = sig;
        io.err(`ptlab ${command}: ${sig}: ${what} (again to exit at once)`);
        this.controller.abort(new Error(sig));
      };
      this.handlers.set(sig, h);
      process.on(sig, h);
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The exit status of the signal received (128 + its number), or undefined when none came. */
  get status(): number | undefined {
    return this.first === undefined ? undefined : STOP_SIGNALS[this.first];
  }

  [Symbol.dispose](): void {
    for (const [sig, h] of this.handlers) process.removeListener(sig, h);
  }
}
