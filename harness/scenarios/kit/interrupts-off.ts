// A CPU on which one workload runs with interrupts off (docs/sdm/output.md §4.5): a long IF=0
// stretch, as in a kernel path or a hypervisor's guest, during which a PMI stays pending. The
// several-context scenarios use it to make a context's ToPA PMI arrive only after the context was
// switched out, the SDM's motivating case for handling a PMI on a saved image.
import { IA32_PERF_GLOBAL_STATUS, IA32_RTIT_CTL, IA32_RTIT_STATUS } from '../../../driver/hw/msrs.js';
import type { Target, TargetEvent, Workload } from '../../../driver/target.js';
import type { SimTarget } from '../../sim/sim-target.js';
import { filterEvents } from './target-wrap.js';

/** How the interrupts-off CPU holds PMIs besides those raised while `late` runs. */
export interface InterruptsOffOptions {
  /** A PMI pending when `late` is entered waits with its own (its entry keeps interrupts off). */
  readonly holdAtEntry?: boolean;
  /**
   * A second workload that runs with interrupts off too, and whose switch to `late` keeps them
   * off (with `holdAtEntry`): a PMI its filled INT region raised waits through `late`'s next slice,
   * while `late` fills its own, and is taken when `late` leaves — back on this workload, one
   * interrupt for both contexts' filled INT regions (a merged PMI, §4.5), whatever the seed.
   */
  readonly carry?: Workload;
  /** Sees every PMI as the driver gets it. */
  readonly onPmi?: (ev: Extract<TargetEvent, { kind: 'pmi' }>) => void;
}

/**
 * `target` on which `late` runs with interrupts off (docs/sdm/output.md §4.5): a PMI raised while its
 * code runs stays pending until it leaves the CPU: it is taken right after the switch to the next
 * context (the driver's save and restore done), or before its exit. What the top half reads (GLOBAL_STATUS,
 * CTL, STATUS) is read when the PMI is taken. The CPU masked the LVT entry when it raised the PMI,
 * so a second one merges into it (§4.5). See InterruptsOffOptions for the rest.
 */
export function interruptsOffWhile(target: Target, sim: SimTarget, late: Workload, opts: InterruptsOffOptions = {}): Target {
  const { holdAtEntry = false, carry, onPmi = () => undefined } = opts;
  let held: Extract<TargetEvent, { kind: 'pmi' }> | undefined, released = false, lateDone = false;
  const take = (): TargetEvent => {
    const f = sim.unit(held!.cpu), ev = held!;
    held = undefined;
    released = false;
    return seen({
      ...ev, globalStatus: f.peek(IA32_PERF_GLOBAL_STATUS.address), ctl: f.peek(IA32_RTIT_CTL.address), status: f.peek(IA32_RTIT_STATUS.address),
    });
  };
  const seen = <E extends TargetEvent>(ev: E): E => {
    if (ev.kind === 'pmi') onPmi(ev as Extract<TargetEvent, { kind: 'pmi' }>);
    return ev;
  };
  return filterEvents(target, async function* (events, workload, cpu) {
    const mine = workload === late, carried = carry !== undefined && workload === carry;
    const it = events[Symbol.asyncIterator]();
    try {
      for (;;) {
        if (held && released) { yield take(); continue; }
        const ran = sim.retiredBranches(cpu);
        const n = await it.next();
        if (n.done) return;
        const ev = n.value;
        // Held when A's code ran since the last event; one pending when A was entered (e.g. B's,
        // raised by the bytes B's save flushed) is taken then unless `holdAtEntry` (the switch
        // ends with interrupts on, or A's entry keeps them off).
        if (mine && ev.kind === 'pmi' && (holdAtEntry || sim.retiredBranches(cpu) !== ran)) { held = ev; continue; }
        // The carried workload's PMIs wait too; its slice lets them go only when `late` has ended.
        if (carried && ev.kind === 'pmi') { held = ev; continue; }
        if ((mine || carried) && held && ev.kind === 'exit') yield take();
        if (held && ev.kind === 'slice' && (mine || (carried && lateDone))) released = true;
        if (mine && ev.kind === 'exit') lateDone = true;
        yield seen(ev);
      }
    } finally {
      await it.return?.();
    }
  });
}
