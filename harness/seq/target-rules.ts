// What checking a sequence needs to know of the target it will run on (docs/formats/seq.md
// "Targets"): whether the reference model is the PT unit (its truth exists: `flow: truth`), and
// which MSR writes reach a real CPU (the allowlist of harness/link/msr-allowlist.ts applies to those).
import { ownerOf } from '../hybrid/routing-target.js';
import type { TargetReach } from '../runner/targets.js';

/** The target as the checker sees it. */
export interface SeqTargetRules {
  /** "sim", "qemu --pt model", "qemu --pt hardware", "ssh:lab1": how refusals name it. */
  readonly label: string;
  /** The reference model is the PT unit (sim, qemu --pt model): the model's truth exists. */
  readonly model: boolean;
  /** Whether a WRMSR of `msr` reaches a real CPU's MSR. */
  realMsr(msr: number): boolean;
  /** --allow-msr: real writes outside the allowlist are allowed. */
  readonly allowMsr: boolean;
}

/** The sim: every MSR is the model's, so nothing is real. */
export const SIM_RULES: SeqTargetRules = { label: 'sim', model: true, realMsr: () => false, allowMsr: false };

/** The rules of the target `reach` says (undefined: the sim). */
export function targetRules(reach: TargetReach | undefined, allowMsr: boolean): SeqTargetRules {
  if (reach === undefined) return SIM_RULES;
  if (reach.kind === 'ssh') return { label: `ssh:${reach.host}`, model: false, realMsr: () => true, allowMsr };
  if (reach.pt === 'hardware') return { label: 'qemu --pt hardware', model: false, realMsr: () => true, allowMsr };
  // --pt model: the model answers the PT unit's MSRs (harness/hybrid/routing-target.ts); every other MSR is the guest CPU's.
  return { label: 'qemu --pt model', model: true, realMsr: (msr) => ownerOf(msr) === 'guest', allowMsr };
}
