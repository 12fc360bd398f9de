// The trace-off window of a PMI: how long tracing was off
// while the handler ran. The driver measures host wall time; a target that
// models time (sim) can also report the branches it retired and the bytes it
// wrote in the window.

/** What a target's meter says at one instant (sim: modelled counters). */
export interface MeterReading {
  /** Branches the CPU has retired (the workload's progress). */
  readonly branches: number;
  /** Trace bytes the CPU has written to memory. */
  readonly bytes: number;
}

/** Optional hook a target's harness supplies; the driver never needs it. */
export interface TraceOffMeter {
  read(cpu: number): MeterReading | Promise<MeterReading>;
}

/** One PMI's trace-off window. */
export interface TraceOffWindow {
  /** Host microseconds from the TraceEn-clearing write to the restoring write. */
  readonly us: number;
  /** Modelled branches retired and bytes written in the window, when the target has a meter. */
  readonly model?: MeterReading;
}

/** Starts measuring; the returned function ends the window. */
export async function openWindow(meter: TraceOffMeter | undefined, cpu: number): Promise<() => Promise<TraceOffWindow>> {
  const t0 = performance.now();
  const elapsedUs = (): number => Math.round((performance.now() - t0) * 1000);
  if (!meter) return async () => ({ us: elapsedUs() });
  const m0 = await meter.read(cpu);
  return async () => {
    const us = elapsedUs();
    const m1 = await meter.read(cpu);
    return { us, model: { branches: m1.branches - m0.branches, bytes: m1.bytes - m0.bytes } };
  };
}
