// StrykerJS: the driver's PMI, ToPA, context-switch, programming and collection code, mutated and
// judged by the scenario suite alone (`ptlab run --all` on the sim target): the only check a lab
// has on real hardware. Mutants are compiled in once (mutant switching) and chosen per run through
// __STRYKER_ACTIVE_MUTANT__, which the command runner sets. Run through `npm run mutation`.
import { MUTATE, common } from './common.mjs';

export default {
  ...common('scenarios'),
  mutate: process.env.PTLAB_MUTATE ? process.env.PTLAB_MUTATE.split(',') : MUTATE,
  testRunner: 'command',
  buildCommand: 'npx tsc -p tsconfig.build.json',
  commandRunner: { command: 'node dist/harness/cli/ptlab.js run --all --fail-fast --keep failed --force --out build/mutation-runs' },
  coverageAnalysis: 'off',
};
