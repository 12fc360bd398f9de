// The targets `ptlab run` can use. Only the sim target runs scenarios today;
// the qemu and ssh targets implement driver/target.ts elsewhere and will be
// added here (their profiles are whatever the guest's CPU is).
import { PtError } from '../../driver/errors.js';
import { RecordingTarget } from '../../driver/transcript.js';
import { applyKnobs, knobOptions, type KnobName } from '../sim/knobs/knobs.js';
import { PROFILE_NAMES, type ProfileName } from '../sim/profiles.js';
import { SimTarget } from '../sim/sim-target.js';
import type { SimSettings, TargetKind } from '../scenarios/scenario.js';

/** Target kinds `ptlab run` accepts today. */
export const RUNNABLE_TARGETS: readonly TargetKind[] = ['sim'];

/** The sim's defaults for scenario runs: PMI skid and flush grain (model choices, recorded in figures). */
export const SIM_DEFAULTS = { pmiSkid: 256, flushBytes: 256 } as const;

/** Throws PtError('bad_config') for a target kind ptlab run cannot use. */
export function checkTarget(kind: string): TargetKind {
  if ((RUNNABLE_TARGETS as readonly string[]).includes(kind)) return kind as TargetKind;
  if (kind === 'qemu' || kind === 'ssh') throw new PtError('bad_config', `target '${kind}' cannot run scenarios yet (ptlab run supports: ${RUNNABLE_TARGETS.join(', ')})`);
  throw new PtError('bad_config', `unknown target '${kind}' (targets: ${RUNNABLE_TARGETS.join(', ')})`);
}

/** Throws PtError('bad_config') for an unknown profile name. */
export function checkProfile(name: string): ProfileName {
  if ((PROFILE_NAMES as readonly string[]).includes(name)) return name as ProfileName;
  throw new PtError('bad_config', `unknown CPU profile '${name}' (profiles: ${PROFILE_NAMES.join(', ')}, all)`);
}

/** A recorded sim target with truth recording on and `knobs` wired in. */
export async function createSim(
  profile: ProfileName, seed: number, knobs: readonly KnobName[] = [], o: SimSettings = {},
): Promise<{ sim: SimTarget; target: RecordingTarget }> {
  const sim = await SimTarget.create(knobOptions({
    profile, seed,
    memory: { ramSize: 64 * 2 ** 20 },
    topa: { pmiSkid: o.pmiSkid ?? SIM_DEFAULTS.pmiSkid },
    trace: { truth: true, flushBytes: SIM_DEFAULTS.flushBytes, ...(o.buffer ? { buffer: o.buffer } : {}) },
  }, knobs));
  applyKnobs(sim, knobs);
  return { sim, target: new RecordingTarget(sim) };
}
