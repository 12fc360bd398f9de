// How close to a lab machine the model runs (docs/design.md "Realism"). By default the model is a
// CPU that stops while the driver thinks and runs nothing but the workload. A lab machine is less
// kind, and `--realism lab` makes the model as unforgiving:
//
// - the CPU keeps executing while a remote handler works on a PMI (NMI → helper → SSH → host →
//   MSR batch: a round trip away), unless the PMI's top half froze the traced task;
// - other code runs on the traced CPU — another process and the kernel, at other addresses and
//   CR3 — at every return from the driver's handler, before the workload's first instruction and
//   after its exit;
// - a co-resident perf NMI handler may unmask LVTPC at once after each PMI, or not.

/** The model's realism settings; every field off is the default model. */
export interface Realism {
  /** µs of model time between a PMI's top half and the remote handler's first action, in which an unfrozen workload runs on. 0: none. */
  readonly handlerLatencyUs: number;
  /** Other code (another process and the kernel) runs on the traced CPU around the workload (exec/other-code.ts). */
  readonly otherCode: boolean;
  /** A co-resident perf NMI handler unmasks the LVT performance-monitor entry right after each PMI. */
  readonly perfUnmasksLvt: boolean;
  /** The PMI's top half freezes the traced task until the driver's handler is done (the design's answer to the latency). */
  readonly topHalfFreezes: boolean;
}

/** The default model: a CPU that waits for the driver, running the workload only. */
export const FROZEN: Realism = { handlerLatencyUs: 0, otherCode: false, perfUnmasksLvt: false, topHalfFreezes: true };

/**
 * The round trip of a remote PMI handler, in µs: NMI, irq_work, the helper, SSH, the host and an MSR
 * batch back. One helper request over SSH to the TCG guest of the tests takes about a millisecond
 * (test/ssh, the helper channel); a handler makes several. Model time: 1 µs = 3200 core cycles at
 * the model's P1 of 32 × 100 MHz (trace/clock.ts).
 */
export const LAB_HANDLER_LATENCY_US = 1000;

/**
 * `--realism lab` for a run of `seed`: the CPU runs on during the handler (unless the top half
 * freezes it), other code runs around the workload, and perf unmasks LVTPC on odd seeds, so a sweep
 * meets both hosts (with and without a perf event active).
 */
export function labRealism(seed: number): Realism {
  return { handlerLatencyUs: LAB_HANDLER_LATENCY_US, otherCode: true, perfUnmasksLvt: seed % 2 === 1, topHalfFreezes: true };
}

/** The realism modes `--realism` takes. */
export type RealismMode = 'frozen' | 'lab';
export const REALISM_MODES: readonly RealismMode[] = ['frozen', 'lab'];

/** The settings of `mode` for a run of `seed`. */
export function realismOf(mode: RealismMode, seed: number): Realism {
  return mode === 'lab' ? labRealism(seed) : FROZEN;
}

/** Core cycles of `us` µs of model time (trace/clock.ts DEFAULT_CLOCK: P1 = 32 × 100 MHz). */
export function cyclesOfUs(us: number, p1 = 32): number {
  return Math.round(us * p1 * 100);
}
