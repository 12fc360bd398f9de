// The reference model as the PT unit of a machine whose RAM it cannot borrow (docs/hosts.md
// "pt: model"): a lab machine reached over SSH has no RAM file shared with this host, and the
// model's output engine writes trace synchronously as the workload runs (harness/sim/output/
// sync-phys.ts), which a memory reached by round trips cannot serve. So the model keeps its own
// memory and the routing target sends physical memory to the model (RoutingParts.memory): ToPA
// tables and trace live in the model's memory, while every MSR outside the PT unit and notes
// still go to the machine. Compare attach-model.ts, where the model writes into real guest RAM.
import type { CallOpts, Target } from '../../driver/target.js';
import { SimTarget, type SimTargetOptions } from '../sim/sim-target.js';
import { RoutingTarget } from './routing-target.js';

/**
 * How to attach a model with its own memory: SimTarget's options (profile, seed, `memory`, `cpus`,
 * ToPA and trace settings) without a borrowed `phys` — the model owns its memory and closes it.
 */
export interface OwnModelOptions extends Omit<SimTargetOptions, 'phys' | 'label'>, CallOpts {}

/**
 * A fresh model in its reset state as the PT unit of `machine`, with the model's own memory as the
 * run's physical memory: `ssh:lab1+model:skylake`. The routing target owns the model only; the
 * machine's owner disposes the machine.
 */
export async function attachOwnModel<G extends Target>(machine: G, o: OwnModelOptions): Promise<RoutingTarget<G, SimTarget>> {
  const { signal, ...options } = o;
  const model = await SimTarget.create({ ...options, label: 'model' }, signal === undefined ? {} : { signal });
  return new RoutingTarget({ guest: machine, model, owns: { guest: false, model: true }, memory: 'model' });
}
