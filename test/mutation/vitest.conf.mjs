// StrykerJS: the mutants the scenario suite let survive (build/mutation/scenarios.json, handed over
// by run.mjs in PTLAB_MUTATE as file:line ranges), judged by the whole vitest suite. Stryker 8's
// vitest runner does not work with vitest 4 (it reads `project.server`, which vitest 4 removed),
// so this uses the command runner too: one `vitest run --bail=1` per mutant, the mutant chosen
// through __STRYKER_ACTIVE_MUTANT__, which spawned `ptlab` processes inherit. Run through
// `npm run mutation`.
import { common } from './common.mjs';

if (!process.env.PTLAB_MUTATE) throw new Error('vitest.conf.mjs mutates what run.mjs hands over in PTLAB_MUTATE; run `npm run mutation`');

export default {
  ...common('vitest'),
  mutate: process.env.PTLAB_MUTATE.split(','),
  testRunner: 'command',
  buildCommand: 'npx tsc -p tsconfig.build.json',
  commandRunner: { command: 'npx vitest run --bail=1 --reporter=dot' },
  coverageAnalysis: 'off',
  // The qemu tests boot guests: a slow mutant must not look like a timeout.
  timeoutMS: 600_000,
};
