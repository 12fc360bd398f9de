// StrykerJS: the same driver files as scenarios.conf.mjs, judged by the whole vitest suite (unit
// tests, model tests and the scenario tests) with per-test coverage, so each mutant runs only the
// tests that reach it. Run through `npm run mutation`.
import { MUTATE, common } from './common.mjs';

export default {
  ...common('vitest'),
  mutate: process.env.PTLAB_MUTATE ? process.env.PTLAB_MUTATE.split(',') : MUTATE,
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.config.ts' },
  coverageAnalysis: 'perTest',
  // The global setup builds the libipt oracles and the QEMU bits once per worker.
  buildCommand: 'npx tsc -p tsconfig.build.json',
};
