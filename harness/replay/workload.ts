// A workload made again from the recipe its `start` line recorded (docs/transcript.md): the same
// generator with the same options gives the same bytes and model on every target.
import type { WorkloadRecipe } from '../../driver/target.js';
import { generateWorkload, GENERATOR, type GeneratedWorkload, type WorkloadOptions } from '../sim/workload/generate.js';
import { NotReplayableError } from './errors.js';

const NUMBER_OPTIONS = ['branches', 'maxDepth', 'maxCalls', 'interrupts', 'cr3Switches', 'ptwrites', 'modeChanges'] as const;

/** The workload of `recipe`; `name` is the recorded one and must come out again. */
export function workloadOfRecipe(recipe: WorkloadRecipe | undefined, name: string, line: number): GeneratedWorkload {
  if (recipe === undefined) throw new NotReplayableError(`workload ${name} has no recipe (recorded by a ptlab older than replay)`, line);
  if (recipe.generator !== GENERATOR || typeof recipe.seed !== 'number') {
    throw new NotReplayableError(`workload ${name}: unknown generator ${String(recipe.generator)}`, line);
  }
  const opts: Record<string, number | bigint> = {};
  for (const k of NUMBER_OPTIONS) if (typeof recipe[k] === 'number') opts[k] = recipe[k];
  if (typeof recipe.base === 'string') opts.base = BigInt(recipe.base);
  const w = generateWorkload(recipe.seed, opts as WorkloadOptions);
  if (w.name !== name) throw new NotReplayableError(`workload ${name}: its recipe makes ${w.name}`, line);
  return w;
}
