// The target a suite runs on, opened once (docs/design.md "harness/cli → scenarios → runner"): the
// sim builds a fresh model CPU per run; qemu boots ONE VM for the whole suite and, with
// `--pt model`, attaches a fresh model to it per run (qemu-suite.ts); ssh keeps one connection
// (ssh-suite.ts). Each run gets a RunCpu: what the driver drives, and the model behind it when
// there is one (truth.jsonl, written/dropped). The CLI takes model knobs (negative controls) on the
// sim target only.
import { PtBusyError, PtError } from '../../driver/base/errors.js';
import { StateError, TargetError } from '../link/errors.js';
import { SshError } from '../ssh/errors.js';
import type { Target } from '../../driver/target.js';
import type { KnobName } from '../sim/knobs/knobs.js';
import type { CpuProfile } from '../sim/profiles.js';
import type { SimTarget } from '../sim/sim-target.js';
import type { SimSettings, TargetKind } from '../scenarios/kit/scenario.js';
import { createSim, type TargetReach } from './targets.js';

/** What one scenario run asks of the target. */
export interface RunNeeds {
  readonly profile: CpuProfile;
  readonly seed: number;
  readonly knobs: readonly KnobName[];
  /** The scenario's model settings (PMI skid, internal buffer). */
  readonly settings: SimSettings;
}

/** The CPU one scenario run drives. */
export interface RunCpu {
  /** What the driver drives (the runner records it into transcript.jsonl). */
  readonly target: Target;
  /** The model behind `target`, when there is one: truth.jsonl, written, dropped (ScenarioContext.sim). */
  readonly model: SimTarget | undefined;
  /** e.g. "sim:skylake", "qemu:tcg+model:skylake", "ssh:lab1". */
  readonly description: string;
  /** After the run's artifacts are taken: disposes a per-run model, frees what the run left on a shared target. */
  release(): Promise<void>;
  /** What preparing the CPU did that the run must show (`--reclaim`): a transcript note and result.json figure `reclaimed` each. */
  readonly notes?: readonly string[];
}

/** The target of a whole suite. */
export interface SuiteTarget extends AsyncDisposable {
  readonly kind: TargetKind;
  /** e.g. "sim", "qemu:tcg+model:skylake", "qemu:kvm", "ssh:lab1". */
  readonly description: string;
  /**
   * The kind whose applicability rules (Scenario.targets) apply: 'sim' wherever the reference
   * model is the PT unit (sim, qemu --pt model), the kind itself on real PT.
   */
  readonly rules: TargetKind;
  /** A real CPU's probed profile (probed-profile.ts); undefined where the profiles are the model's (--cpu). */
  readonly probed: CpuProfile | undefined;
  /** A CPU fresh from reset (as far as the target allows) for one run. */
  prepare(run: RunNeeds): Promise<RunCpu>;
  /** Why the target can run nothing more (the VM or the machine went away); undefined while it can. */
  lost?(): string | undefined;
}

/** The message of an error that means the target failed (it stopped answering, its connection broke), else undefined. */
export function targetFailure(e: unknown): string | undefined {
  return e instanceof TargetError || e instanceof SshError || e instanceof StateError ? e.message : undefined;
}

/** The refusal of a CPU someone else traces on (claim.ts), with what to do, or undefined. */
export function cpuBusy(e: unknown): string | undefined {
  if (!(e instanceof PtBusyError)) return undefined;
  const hint = (e as { hint?: unknown }).hint;
  return typeof hint === 'string' ? `${e.message}; ${hint}` : e.message;
}

/** The suite target could not be opened: not installed, launch or connect failed, or it refused (no PT). */
export class TargetUnavailableError extends PtError {
  override readonly name = 'TargetUnavailableError';

  constructor(
    /** `qemu`, `ssh:HOST`. */
    readonly target: string,
    message: string,
    /** What the user can do instead (printed after the message). */
    readonly hint?: string,
    options?: ErrorOptions,
  ) {
    const cause = options?.cause;
    super(cause instanceof PtError && cause.code !== 'bad_config' ? cause.code : 'target_failed', message, options);
  }
}

/** The sim as a suite target: a new recorded SimTarget per run, knobs wired in. */
export class SimSuiteTarget implements SuiteTarget {
  readonly kind = 'sim';
  readonly description = 'sim';
  readonly rules = 'sim';
  readonly probed = undefined;

  async prepare(run: RunNeeds): Promise<RunCpu> {
    const { sim } = await createSim(run.profile, run.seed, run.knobs, run.settings);
    return { target: sim, model: sim, description: sim.description, release: () => sim[Symbol.asyncDispose]() };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    // Nothing shared to stop.
  }
}

/** Rethrows PtError('aborted') when `signal` fired (an interrupted launch is not an unavailable target). */
export function throwIfInterrupted(signal: AbortSignal | undefined, e: unknown): void {
  if (signal?.aborted) throw new PtError('aborted', `interrupted while opening the target: ${(e as Error).message}`, { cause: e });
}

/** Opens the target of `kind` (once per suite); `reach` says how for qemu and ssh. */
export async function openSuiteTarget(kind: TargetKind, reach: TargetReach | undefined, signal?: AbortSignal): Promise<SuiteTarget> {
  if (kind === 'sim') return new SimSuiteTarget();
  if (reach === undefined || reach.kind !== kind) throw new PtError('bad_config', `--target ${kind} needs its connection options`);
  // Loaded on demand: a sim run does not pay for the QEMU and SSH code.
  if (reach.kind === 'qemu') return (await import('./qemu-suite.js')).openQemuSuite(reach, signal);
  return (await import('./ssh-suite.js')).openSshSuite(reach, signal);
}
