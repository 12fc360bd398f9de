// What a scenario is: a named, readable sequence against one
// target with explicit expectations, where it applies (and why it skips
// elsewhere), and the model knob that must turn its verdict to "fail".
import type { DriverFault, DriverFaults } from '../../../driver/faults.js';
import type { PtCaps } from '../../../driver/hw/cpuid.js';
import type { KnobName } from '../../sim/knobs/knobs.js';
import type { CpuProfile } from '../../sim/profiles.js';
import type { TopHalf } from '../../sim/exec/execution.js';
import type { InternalBufferConfig } from '../../sim/trace/internal-buffer.js';
import type { RealismMode } from '../../sim/realism.js';
import type { ScenarioContext } from './context.js';

/** Model settings a scenario may ask of the sim target. */
export interface SimSettings {
  /** Bytes of ToPA PMI skid (docs/sdm/output.md §4.5). */
  readonly pmiSkid?: number;
  /** The internal buffer between generator and output (OVF when it cannot drain). */
  readonly buffer?: InternalBufferConfig;
  /** A PSB due inside the driver's handler waits for the resume or PendPSB (GeneratorOptions.deferPsbInHandler). */
  readonly deferPsbInHandler?: boolean;
  /** What the PMI's top half does before the driver sees the event, as the guest module's does (exec/execution.ts TopHalf). */
  readonly topHalf?: TopHalf;
  /** Another agent already traces on CPU 0 when the run starts (harness/sim/foreign-owner.ts). */
  readonly foreignOwner?: boolean;
  /** How close to a lab machine the model runs (harness/sim/realism.ts; `ptlab run --realism`). Default frozen. */
  readonly realism?: RealismMode;
}

/** The kinds of target a scenario can name. */
export type TargetKind = 'sim' | 'qemu' | 'ssh';

/** What a scenario knows before it runs: the target kind, the CPU profile and what it enumerates. */
export interface ScenarioEnv {
  readonly target: TargetKind;
  /** What traces: the reference model (the sim, or qemu/ssh with `--pt model`) or real PT hardware. */
  readonly ptUnit: 'model' | 'hardware';
  /**
   * The CPU: a model profile, or on real PT the probed one (harness/runner/probed-profile.ts). Its
   * `errata` follow from its CPUID signature either way (driver/hw/errata.ts), so skip on them.
   */
  readonly profile: CpuProfile;
  readonly caps: PtCaps;
  readonly seed: number;
  /** Deliberate driver bugs for this run (driver/faults.ts; negative controls of the driver). */
  readonly driverFaults?: DriverFaults;
  /** Aborts the run's driver sessions (RunSpec.signal); their teardown still runs. */
  readonly signal?: AbortSignal;
}

/** One named scenario. */
export interface Scenario {
  readonly name: string;
  /** What it checks, in one line (ptlab list). */
  readonly checks: string;
  /** Where it applies, in words (ptlab list). */
  readonly appliesTo: string;
  /** Targets it can run on. */
  readonly targets: readonly TargetKind[];
  /** Why it cannot run in `env` (the skip reason), or undefined when it applies. */
  skip(env: ScenarioEnv): string | undefined;
  /** Model settings the scenario needs on the sim target (e.g. a PMI skid that fits a margin). */
  readonly sim?: SimSettings;
  /** The negative control: the model knob that breaks what the scenario checks. */
  readonly negative: KnobName;
  /** Driver faults (driver/faults.ts) the scenario must catch: the negative controls of the driver. */
  readonly catches?: readonly DriverFault[];
  /** The sequence; records expectations and figures in `ctx`. */
  run(ctx: ScenarioContext): Promise<void>;
}

/** A skip rule for a missing capability ("needs <what> (<CPUID bit>)"). */
export function needs(ok: boolean, what: string): string | undefined {
  return ok ? undefined : `the CPU does not enumerate ${what}`;
}

/** The first skip reason of several rules. */
export function firstSkip(...reasons: (string | undefined)[]): string | undefined {
  return reasons.find((r) => r !== undefined);
}
