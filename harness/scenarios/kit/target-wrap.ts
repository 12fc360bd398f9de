// A Target whose executions' events pass through a filter. Scenarios use it to model what happens
// around the driver between the CPU and the handler — a PMI held while interrupts are off, a PMI
// raised by another user of the shared performance-monitoring interrupt — with the driver's code
// and the target's own behaviour unchanged.
import { withEvents } from '../../../driver/exec-view.js';
import type { Execution, StartOpts, Target, TargetEvent, Workload } from '../../../driver/target.js';

/** What the driver sees of one execution's events: `events` as the target gives them, and what it ran. */
export type EventFilter = (events: AsyncIterable<TargetEvent>, workload: Workload, cpu: number) => AsyncIterable<TargetEvent>;

/** `target`, with every execution's events passed through `filter`. */
export function filterEvents(target: Target, filter: EventFilter): Target {
  const start = (workload: Workload, cpu: number, opts?: StartOpts): Execution => {
    const exec = target.start(workload, cpu, opts);
    return withEvents(exec, filter(exec.events, workload, cpu));
  };
  return new Proxy(target, {
    get(t, k) {
      if (k === 'start') return start;
      const v: unknown = Reflect.get(t, k, t);
      return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(t) : v;
    },
  });
}
