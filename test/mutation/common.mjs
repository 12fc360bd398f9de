// What `npm run mutation` mutates and the settings both of its StrykerJS runs share.

/** The driver files whose mistakes the scenario suite must catch. */
export const MUTATE = [
  'driver/pmi/**/*.ts',
  'driver/topa/**/*.ts',
  'driver/context-switch.ts',
  'driver/contexts.ts',
  'driver/program.ts',
  'driver/collect/**/*.ts',
];

/** Settings of the run named `name` (its reports go to build/mutation/<name>.*). */
export function common(name) {
  return {
    packageManager: 'npm',
    concurrency: Number(process.env.PTLAB_MUTATION_JOBS ?? 2),
    // Labels and messages are not behaviour a scenario can check.
    mutator: { excludedMutations: ['StringLiteral'] },
    reporters: ['json', 'clear-text', 'progress-append-only'],
    jsonReporter: { fileName: `build/mutation/${name}.json` },
    clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
    ignorePatterns: ['dist', 'build', 'runs', 'images/out', 'reports', '.stryker-tmp'],
    tempDirName: '.stryker-tmp',
    cleanTempDir: 'always',
    timeoutMS: 60_000,
    timeoutFactor: 2,
    thresholds: { high: 95, low: 90, break: null },
  };
}
