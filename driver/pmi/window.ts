// The trace-off window of a PMI (issue 4 item 4): how long tracing was off
// while the handler ran. The driver measures host wall time; a target that
// models time (sim) can also report modelled instructions and bytes.

/** What a target's meter says at one instant (sim: modelled counters). */
export interface MeterReading {
  readonly instructions: number;
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
  /** Modelled instructions and bytes in the window, when the target has a meter. */
  readonly model?: MeterReading;
}

/** Starts measuring; the returned function ends the window. */
export async function openWindow(meter: TraceOffMeter | undefined, cpu: number): Promise<() => Promise<TraceOffWindow>> {
  const t0 = performance.now();
  const m0 = meter ? await meter.read(cpu) : undefined;
  return async () => {
    const us = Math.round((performance.now() - t0) * 1000);
    if (!meter || !m0) return { us };
    const m1 = await meter.read(cpu);
    return { us, model: { instructions: m1.instructions - m0.instructions, bytes: m1.bytes - m0.bytes } };
  };
}
