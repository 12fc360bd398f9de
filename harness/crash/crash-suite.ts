// The sim as a suite target for the crash-point sweep: each run's model sits behind an
// InjectingTarget (inject.ts), and what the model holds when the run lets go of it — its memory
// oracle's events, the CPUs still tracing, the bytes still allocated — is kept for the sweep to
// judge (sweep.ts), read from the model itself, past the injector.
import { createSim } from '../runner/targets.js';
import type { RunCpu, RunNeeds, SuiteTarget } from '../runner/suite-target.js';
import { InjectingTarget, type Injection } from './inject.js';

/** What the model held when the run released it. */
export interface ModelAfterRun {
  /** Memory-oracle events (docs/design.md "The memory oracle"). */
  readonly corrupt: number;
  readonly firstCorrupt?: string;
  /** CPUs whose IA32_RTIT_CTL.TraceEn was still 1. */
  readonly tracing: readonly number[];
  /** Bytes of the model's memory still allocated. */
  readonly allocated: number;
  /** Operations the run made through the injector, and the one the injection hit. */
  readonly ops: number;
  readonly hit?: string;
}

/** A sim suite whose next run fails as `injection` says (or only counts, without one). */
export class CrashSuite implements SuiteTarget {
  readonly kind = 'sim';
  readonly description = 'sim (crash points)';
  readonly rules = 'sim';
  readonly probed = undefined;
  /** The injection of the next run. */
  injection: Injection | undefined;
  /** The model of the last run, once released. */
  after: ModelAfterRun | undefined;
  private current: InjectingTarget | undefined;

  lost(): string | undefined {
    return this.current?.lostBecause;
  }

  async prepare(run: RunNeeds): Promise<RunCpu> {
    this.after = undefined;
    const { sim } = await createSim(run.profile, run.seed, run.knobs, run.settings);
    const target = new InjectingTarget(sim, this.injection);
    this.current = target;
    return {
      target, model: sim, description: sim.description,
      release: async () => {
        const first = sim.oracle.events[0];
        this.after = {
          corrupt: sim.oracle.count, ...(first ? { firstCorrupt: `${first.kind}: ${first.detail}` } : {}),
          tracing: sim.tracingCpus(), allocated: sim.phys.allocatedBytes, ops: target.ops, ...(target.hit ? { hit: target.hit } : {}),
        };
        this.current = undefined;
        await sim[Symbol.asyncDispose]();
      },
    };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    // Every run's model is disposed by its release.
  }
}
