// The targets `ptlab run` can use (docs/design.md "sim", "qemu", "ssh") and how to
// reach them: the sim builds a fresh model per run; qemu boots one VM for the
// whole suite (`--pt model`: the reference model as the guest's PT unit, or
// `--pt hardware`: the guest CPU's own PT); ssh drives a lab machine's PT.
import { PtError } from '../../driver/base/errors.js';
import { RecordingTarget } from '../rundir/recording-target.js';
import type { AccelRequest } from '../qemu/accel.js';
import { applyKnobs, knobOptions, type KnobName } from '../sim/knobs/knobs.js';
import { PROFILE_NAMES, type CpuProfile, type ProfileName } from '../sim/profiles.js';
import { SimTarget, type SimTargetOptions } from '../sim/sim-target.js';
import { realismOf } from '../sim/realism.js';
import type { SimSettings, TargetKind } from '../scenarios/kit/scenario.js';
import { didYouMean } from '../text/nearest.js';

/** Target kinds `ptlab run` accepts. */
export const RUNNABLE_TARGETS: readonly TargetKind[] = ['sim', 'qemu', 'ssh'];

/** The sim's defaults for scenario runs: PMI skid and flush grain (model choices, recorded in figures). */
export const SIM_DEFAULTS = { pmiSkid: 256, flushBytes: 256 } as const;

/**
 * Whose PT unit the driver programs on a qemu guest: `hardware` — the guest CPU's, refused
 * (UnsupportedError) unless CPUID enumerates PT; `model` — the reference model attached to the
 * guest (harness/hybrid/attach-model.ts).
 */
export type PtMode = 'hardware' | 'model';

/** How to boot the qemu target (`--pt`, `--accel`). */
export interface QemuReach {
  readonly kind: 'qemu';
  /** `hardware` (default): the guest CPU's PT, refused without it; `model`: the reference model attached to the guest. */
  readonly pt: PtMode;
  readonly accel: AccelRequest;
  /** `--reclaim`: take the guest CPU back when someone else traces on it (claim.ts); with --pt hardware only. */
  readonly reclaim?: boolean;
  /** `ptlab seq --allow-msr`: the guest's MSRs outside the PT allowlist may be written (harness/link/msr-allowlist.ts). */
  readonly allowMsr?: boolean;
}

/** How to reach a lab machine (`--host`, `--port`, `--user`, `--key`, `--known-host`). */
export interface SshReach {
  readonly kind: 'ssh';
  readonly host: string;
  readonly port?: number;
  /** Default 'root' (the helper opens the guest module's device). */
  readonly user?: string;
  /** The client's private key file. Default ~/.ssh/id_ed25519. */
  readonly key?: string;
  /** The pinned host key: an OpenSSH public key file or a known_hosts file. Default ~/.ssh/known_hosts. */
  readonly knownHost?: string;
  /**
   * `hardware` (default): the machine's own PT, refused without it. `model`: a machine without PT
   * whose MSRs and helper are driven over SSH, with the reference model as its PT unit and the
   * model's own memory (an inventory's `pt: model`, docs/hosts.md).
   */
  readonly pt?: PtMode;
  /** The name in descriptions (`ssh:<label>`); the host by default (an inventory gives its host name). */
  readonly label?: string;
  /** Bound of connect + helper start, in ms (default 30 s). */
  readonly connectTimeoutMs?: number;
  /** `--reclaim`: take the machine's CPU back when someone else traces on it (claim.ts); with its own PT only. */
  readonly reclaim?: boolean;
  /** `ptlab seq --allow-msr`: MSRs outside the PT allowlist may be written (harness/link/msr-allowlist.ts). */
  readonly allowMsr?: boolean;
  /**
   * The CPUs the suite's lanes trace on, one each (`--cpus`, an inventory's `cpus:`). Default: the
   * online CPUs but CPU 0 (CPU 0 on a one-CPU machine): cpu-map.ts laneCpus.
   */
  readonly cpus?: readonly number[];
}

/** How to reach a target other than the sim. */
export type TargetReach = QemuReach | SshReach;

/** Throws PtError('bad_config') for a target kind ptlab run cannot use. */
export function checkTarget(kind: string): TargetKind {
  if ((RUNNABLE_TARGETS as readonly string[]).includes(kind)) return kind as TargetKind;
  throw new PtError('bad_config', `unknown target '${kind}' (targets: ${RUNNABLE_TARGETS.join(', ')})`);
}

/** Throws PtError('bad_config') for an unknown profile name. */
export function checkProfile(name: string): ProfileName {
  if ((PROFILE_NAMES as readonly string[]).includes(name)) return name as ProfileName;
  throw new PtError('bad_config', `unknown CPU profile '${name}'${didYouMean(name, [...PROFILE_NAMES, 'all'])} (profiles: ${PROFILE_NAMES.join(', ')}, all)`);
}

/** A recorded sim target with truth recording on and `knobs` wired in. */
export async function createSim(
  profile: ProfileName | CpuProfile, seed: number, knobs: readonly KnobName[] = [], o: SimSettings = {},
): Promise<{ sim: SimTarget; target: RecordingTarget }> {
  const sim = await SimTarget.create({ ...runModelOptions(profile, seed, knobs, o), memory: { ramSize: 64 * 2 ** 20 } });
  applyKnobs(sim, knobs);
  return { sim, target: new RecordingTarget(sim) };
}

/**
 * The model of one scenario run, as the sim and `qemu --pt model` both build it (so both write the
 * same bytes): the profile and seed, the runner's PMI skid, the scenario's settings (buffer, top
 * half), and the options `knobs` contribute (knobs.ts; their wiring is applyKnobs, after create).
 */
export function runModelOptions(profile: ProfileName | CpuProfile, seed: number, knobs: readonly KnobName[], o: SimSettings): SimTargetOptions {
  return knobOptions({
    profile, seed,
    topa: { pmiSkid: o.pmiSkid ?? SIM_DEFAULTS.pmiSkid },
    trace: modelTrace(o),
    ...(o.topHalf ? { topHalf: o.topHalf } : {}),
    ...(o.foreignOwner ? { foreignOwner: [0] } : {}),
    ...(o.realism && o.realism !== 'frozen' ? { realism: realismOf(o.realism, seed) } : {}),
  }, knobs);
}

/** The generator options of a scenario run: truth on, the runner's flush grain, the scenario's buffer. */
export function modelTrace(o: SimSettings): { truth: true; flushBytes: number; buffer?: NonNullable<SimSettings['buffer']>; deferPsbInHandler?: boolean } {
  return { truth: true, flushBytes: SIM_DEFAULTS.flushBytes, ...(o.buffer ? { buffer: o.buffer } : {}), ...(o.deferPsbInHandler ? { deferPsbInHandler: true } : {}) };
}
