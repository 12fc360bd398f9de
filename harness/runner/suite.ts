// A matrix of runs (ptlab run): scenarios × profiles on one target, one run
// directory each under `out/<scenario>/<profile>/`, progress as each finishes,
// and a junit.xml of every run at `out/junit.xml` for CI. The target is opened
// once for the whole suite (one VM) and always disposed, also when the suite is
// aborted (SIGINT in the CLI) or a run throws.
import { access, constants, mkdir, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { PtError } from '../../driver/errors.js';
import { junitXml } from '../report/junit.js';
import type { ResultJson } from '../report/result.js';
import type { DriverFault } from '../../driver/faults.js';
import type { KnobName } from '../sim/knobs/knobs.js';
import type { CpuProfile, ProfileName } from '../sim/profiles.js';
import type { Scenario, TargetKind } from '../scenarios/scenario.js';
import { runScenario } from './run-scenario.js';
import { openSuiteTarget, type SuiteTarget } from './suite-target.js';
import type { TargetReach } from './targets.js';

/** What to run. */
export interface SuitePlan {
  readonly scenarios: readonly Scenario[];
  readonly target: TargetKind;
  /** Model profiles (sim, qemu --pt model); a real CPU (qemu --pt hardware, ssh) runs its probed profile instead. */
  readonly profiles: readonly ProfileName[];
  readonly seed: number;
  readonly out: string;
  /** Model knobs: sim only. */
  readonly knobs?: readonly KnobName[];
  /** Driver faults (driver/faults.ts): any target. */
  readonly driverFaults?: readonly DriverFault[];
  /** How to reach a qemu or ssh target. */
  readonly reach?: TargetReach;
}

/** How a suite runs. */
export interface SuiteOptions {
  /** Sees each result as it finishes. */
  readonly progress?: (r: ResultJson, i: number, n: number, ms: number) => void;
  /** Called once the target is open, with its description (e.g. to say a VM booted). */
  readonly opened?: (t: SuiteTarget) => void;
  /** Stops the suite after the current run (the target is still disposed); PtError('aborted'). */
  readonly signal?: AbortSignal;
}

/** The run directory of one (scenario, profile) under `out`. */
export function runDirOf(out: string, scenario: string, profile: string): string {
  return join(out, scenario, profile);
}

/** Creates `out` if needed and checks that it is a writable directory (before anything runs); returns the first directory it created. */
export async function prepareOut(out: string): Promise<string | undefined> {
  try {
    const created = await mkdir(out, { recursive: true });
    if (!(await stat(out)).isDirectory()) throw new Error('not a directory');
    await access(out, constants.W_OK);
    return created;
  } catch (e) {
    throw new PtError('bad_config', `cannot write run directories under --out ${out}: ${(e as Error).message}`, { cause: e });
  }
}

/** Removes the directories prepareOut created, from `out` up to `created`, while they are empty. */
async function unprepareOut(out: string, created: string | undefined): Promise<void> {
  if (created === undefined) return;
  const top = resolve(created);
  for (let d = resolve(out); ; d = dirname(d)) {
    if (!(await rmdir(d).then(() => true, () => false)) || d === top || dirname(d) === d) return;
  }
}

/**
 * Runs every (scenario, profile) of `plan` in order on one target opened for the suite. On abort
 * the runs so far keep their directories and junit.xml, and PtError('aborted') is thrown.
 */
export async function runSuite(plan: SuitePlan, o: SuiteOptions | SuiteOptions['progress'] = {}): Promise<ResultJson[]> {
  const opts: SuiteOptions = typeof o === 'function' ? { progress: o } : o;
  const progress = opts.progress ?? (() => undefined);
  const created = await prepareOut(plan.out);
  let opened: SuiteTarget;
  try {
    opened = await openSuiteTarget(plan.target, plan.reach, opts.signal);
  } catch (e) {
    await unprepareOut(plan.out, created); // no target, no run: leave nothing behind
    throw e;
  }
  await using host = opened;
  opts.opened?.(host);
  const profiles: readonly (ProfileName | CpuProfile)[] = host.probed ? [host.probed] : plan.profiles;
  const jobs = plan.scenarios.flatMap((s) => profiles.map((p) => ({ s, p })));
  const results: ResultJson[] = [];
  try {
    for (const [i, { s, p }] of jobs.entries()) {
      if (opts.signal?.aborted) throw new PtError('aborted', `interrupted after ${results.length} of ${jobs.length} runs`, { cause: opts.signal.reason });
      const t0 = performance.now();
      const name = typeof p === 'string' ? p : p.name;
      const r = await runScenario({ scenario: s, target: plan.target, profile: p, seed: plan.seed, knobs: plan.knobs ?? [], driverFaults: plan.driverFaults ?? [] }, runDirOf(plan.out, s.name, name), host);
      results.push(r);
      progress(r, i + 1, jobs.length, Math.round(performance.now() - t0));
    }
  } finally {
    await writeFile(join(plan.out, 'junit.xml'), junitXml(results));
  }
  return results;
}
