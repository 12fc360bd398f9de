// A matrix of runs (ptlab run): scenarios × profiles on one target, one run
// directory each under `out/<scenario>/<profile>/`, progress as each finishes,
// and a junit.xml of every run at `out/junit.xml` for CI.
import { access, constants, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PtError } from '../../driver/errors.js';
import { junitXml } from '../report/junit.js';
import type { ResultJson } from '../report/result.js';
import type { KnobName } from '../sim/knobs/knobs.js';
import type { ProfileName } from '../sim/profiles.js';
import type { Scenario, TargetKind } from '../scenarios/scenario.js';
import { runScenario } from './run-scenario.js';

/** What to run. */
export interface SuitePlan {
  readonly scenarios: readonly Scenario[];
  readonly target: TargetKind;
  readonly profiles: readonly ProfileName[];
  readonly seed: number;
  readonly out: string;
  readonly knobs?: readonly KnobName[];
}

/** The run directory of one (scenario, profile) under `out`. */
export function runDirOf(out: string, scenario: string, profile: string): string {
  return join(out, scenario, profile);
}

/** Creates `out` if needed and checks that it is a writable directory (before anything runs). */
export async function prepareOut(out: string): Promise<void> {
  try {
    await mkdir(out, { recursive: true });
    if (!(await stat(out)).isDirectory()) throw new Error('not a directory');
    await access(out, constants.W_OK);
  } catch (e) {
    throw new PtError('bad_config', `cannot write run directories under --out ${out}: ${(e as Error).message}`, { cause: e });
  }
}

/** Runs every (scenario, profile) of `plan` in order; `progress` sees each result as it finishes. */
export async function runSuite(plan: SuitePlan, progress: (r: ResultJson, i: number, n: number, ms: number) => void = () => undefined): Promise<ResultJson[]> {
  await prepareOut(plan.out);
  const jobs = plan.scenarios.flatMap((s) => plan.profiles.map((p) => ({ s, p })));
  const results: ResultJson[] = [];
  for (const [i, { s, p }] of jobs.entries()) {
    const t0 = performance.now();
    const r = await runScenario({ scenario: s, target: plan.target, profile: p, seed: plan.seed, knobs: plan.knobs ?? [] }, runDirOf(plan.out, s.name, p));
    results.push(r);
    progress(r, i + 1, jobs.length, Math.round(performance.now() - t0));
  }
  await writeFile(join(plan.out, 'junit.xml'), junitXml(results));
  return results;
}
