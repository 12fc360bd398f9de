// The one run a suite target with a model attached per run holds at a time (qemu --pt model,
// an inventory's `pt: model` machine over SSH): a new run stops one whose release never came, a
// release forgets only its own run, and the suite's disposal stops the run before the host (the
// run's model writes through the host: guest RAM, the helper link).

export class RunModelSlot<T extends AsyncDisposable> {
  /** The run's target while a run holds it (disposed by its release, or by the suite's disposal). */
  private current: T | undefined;

  /** Stops the run still held, if any: before a new run is prepared. */
  async clear(): Promise<void> {
    await this.current?.[Symbol.asyncDispose]();
    this.current = undefined;
  }

  /** `t` is now the run held. */
  hold(t: T): void {
    this.current = t;
  }

  /** A run's release: stops `t`, and forgets it if it is still the run held. */
  async release(t: T): Promise<void> {
    await t[Symbol.asyncDispose]();
    if (this.current === t) this.current = undefined;
  }

  /** The suite's disposal: stops the run held, then the host (`stopHost`), even when the run's stop fails. */
  async disposeThen(stopHost: () => Promise<void>): Promise<void> {
    try {
      await this.current?.[Symbol.asyncDispose]();
    } finally {
      this.current = undefined;
      await stopHost();
    }
  }
}
