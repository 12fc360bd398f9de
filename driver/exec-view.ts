// A wrapper's view of an Execution (driver/target.ts): the same workload, with its events passed
// through the wrapper (a recorder, a CPU map, a filter); holding, letting go and disposal stay the
// execution's own.
import type { CallOpts, Execution, Placement, TargetEvent } from './target.js';

/** What a wrapper may put around each of an execution's own calls. */
export interface ExecCalls {
  placed?(call: () => Promise<Placement>): Promise<Placement>;
  go?(call: () => Promise<void>): Promise<void>;
}

/** `exec` with `events` as its events; `around` sees its placed() and go() calls. */
export function withEvents(exec: Execution, events: AsyncIterable<TargetEvent>, around: ExecCalls = {}): Execution {
  return {
    events,
    placed: (opts?: CallOpts) => (around.placed ? around.placed(() => exec.placed(opts)) : exec.placed(opts)),
    go: (opts?: CallOpts) => (around.go ? around.go(() => exec.go(opts)) : exec.go(opts)),
    [Symbol.asyncDispose]: () => exec[Symbol.asyncDispose](),
  };
}
