// The cells of a host that ran nothing (down, refused, interrupted while connecting: docs/hosts.md
// "When a host is unavailable"), as `error` results with the reason, so its junit testsuite and
// results say which runs are missing and why. The cells are the suite's (runner/matrix.ts
// cellsOf), where a `pt: hardware` host would have run its own CPU's profile (`probed`).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { junitSweepXml, junitXml } from '../report/junit.js';
import { RESULTS_FILE, resultsIndexText, type TimedResult } from '../rundir/results-index.js';
import { errorResult } from '../rundir/result.js';
import { PROBED_PROFILE } from '../runner/probed-profile.js';
import { cellsOf } from '../runner/matrix.js';
import { seedRange, type SuitePlan } from '../runner/suite.js';
import type { LabHost } from './inventory.js';
import { replaceFile } from '../report/owned-files.js';

/** Every cell of `plan` on `host` as an error `not run: <why>`, in the suite's order. */
export function notRunResults(plan: SuitePlan, host: LabHost, why: string): TimedResult[] {
  const profiles = host.pt === 'model' ? plan.profiles : [PROBED_PROFILE];
  return cellsOf({ seeds: seedRange(plan), scenarios: plan.scenarios, profiles }).map((c) => ({
    result: errorResult({ scenario: c.scenario.name, target: plan.target, profile: c.profile, seed: c.seed }, `not run: ${why}`), ms: 0,
  }));
}

/** Writes junit.xml and results.jsonl of a host that ran nothing into `dir` (a suite directory like any other). */
export async function writeNotRun(dir: string, plan: SuitePlan, timed: readonly TimedResult[], why: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await replaceFile(join(dir, 'junit.xml'), plan.lastSeed !== undefined ? junitSweepXml(timed, why) : junitXml(timed, why));
  await replaceFile(join(dir, RESULTS_FILE), resultsIndexText(timed));
}
