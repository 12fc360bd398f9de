// A matrix of runs (ptlab run): scenarios × profiles on one target, one run
// directory each under `out/<scenario>/<profile>/` (a seed sweep: seeds ×
// scenarios × profiles under `out/seed-<S>/`), progress as each finishes,
// a junit.xml of every run at `out/junit.xml` for CI and the index of results
// `out/results.jsonl`. A shard (`--shard i/n`) runs only its cells and writes
// `out/shard.json`, which says which shard of which matrix it is
// (docs/sharding.md). The target is opened once for the whole suite (one VM)
// and always disposed, also when the suite is aborted (SIGINT in the CLI) or a
// run throws.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import { junitSweepXml, junitXml } from '../report/junit.js';
import { RESULTS_FILE, resultsIndexText, type TimedResult } from '../rundir/results-index.js';
import type { ResultJson } from '../rundir/result.js';
import { prepareOut, unprepareOut } from '../report/out-dir.js';
import type { MadeSections } from '../report/html/suite-view.js';
import type { DriverFault } from '../../driver/faults.js';
import type { KnobName } from '../sim/knobs/knobs.js';
import type { RealismMode } from '../sim/realism.js';
import type { CpuProfile, ProfileName } from '../sim/profiles.js';
import type { Scenario, TargetKind } from '../scenarios/kit/scenario.js';
import { cellsOf, fingerprintOf, type MatrixDef } from './matrix.js';
import type { KeepRuns } from './run-scenario.js';
import { cellsOfShard, removeShardJson, SHARD_FORMAT, writeShardJson, type ShardJson, type ShardSpec } from './shard.js';
import { openSuiteTarget, type SuiteTarget } from './suite-target.js';
import { SuiteRun, type Incomplete, type SuiteCell } from './suite-run.js';
import { laneCpus } from './cpu-map.js';
import { HelperPtSuite } from './helper-suite.js';
import { simWorkerLane, targetLane, type Lane } from './lanes.js';
import type { TargetReach } from './targets.js';
import { ptlabVersion } from './version.js';
import { replaceFile } from '../report/owned-files.js';

/** What to run. */
export interface SuitePlan {
  readonly scenarios: readonly Scenario[];
  readonly target: TargetKind;
  /** Model profiles (sim, qemu --pt model); a real CPU (qemu --pt hardware, ssh) runs its probed profile instead. */
  readonly profiles: readonly ProfileName[];
  /** The seed; with `lastSeed`, the first seed of a sweep over `seed`..`lastSeed`. */
  readonly seed: number;
  readonly lastSeed?: number;
  readonly out: string;
  /** Which run directories to keep (default: all for one seed, failed ones for a sweep). */
  readonly keep?: KeepRuns;
  /** `--out` may hold an earlier run: its run directories are replaced (foreign files are kept). */
  readonly force?: boolean;
  /** Stop at the first failed run; the runs after it are not made. */
  readonly failFast?: boolean;
  /** Model knobs: sim only. */
  readonly knobs?: readonly KnobName[];
  /** How close to a lab machine the model runs (`--realism`: harness/sim/realism.ts); where a model is the PT unit. */
  readonly realism?: RealismMode;
  /** Driver faults (driver/faults.ts): any target. */
  readonly driverFaults?: readonly DriverFault[];
  /** How to reach a qemu or ssh target. */
  readonly reach?: TargetReach;
  /** Runs ending in a target failure after which the suite stops (default suite-run.ts DEFAULT_MAX_TARGET_FAILURES). */
  readonly maxTargetFailures?: number;
  /** Run only this shard's cells (shard.ts) and write shard.json. */
  readonly shard?: ShardSpec;
  /** Cells run at once (lanes.ts): worker threads on the sim, VMs on qemu, sessions on ssh. Default 1. */
  readonly jobs?: number;
}

/** How a suite runs. */
export interface SuiteOptions {
  /** Sees each result as it finishes: the i-th of n, its time, and whether it was the last run of its seed. */
  readonly progress?: (r: ResultJson, i: number, n: number, ms: number, seedDone: boolean) => void;
  /** Called once the target is open, with its description (e.g. to say a VM booted). */
  readonly opened?: (t: SuiteTarget) => void;
  /** Stops the suite after the current run (the target is still disposed); the outcome is incomplete. */
  readonly signal?: AbortSignal;
  /** Stops the target at once (the current run ends in an error), then as `signal`. */
  readonly now?: AbortSignal;
}

/** The run directory of one (scenario, profile) under `out`; in a sweep, under `out/seed-<S>/`. */
export function runDirOf(out: string, scenario: string, profile: string, sweepSeed?: number): string {
  return sweepSeed === undefined ? join(out, scenario, profile) : join(out, `seed-${sweepSeed}`, scenario, profile);
}

/** The seeds of a plan: `seed`, or the sweep `seed`..`lastSeed`. */
export function seedRange(plan: Pick<SuitePlan, 'seed' | 'lastSeed'>): { readonly from: number; readonly to: number } {
  return { from: plan.seed, to: plan.lastSeed ?? plan.seed };
}

/** What a suite produced. */
export interface SuiteOutcome {
  /** Every run made, in order; after a target death or too many target failures, the runs not made as errors. */
  readonly results: ResultJson[];
  /** The report sections the lanes made as runs ended, by run directory (absolute): report.html is assembled from them. */
  readonly sections: MadeSections;
  /** Set when the suite stopped early (its junit.xml says so too). */
  readonly incomplete?: Incomplete;
  /** The target could not be stopped cleanly (QEMU had to be killed); the suite's results stand. */
  readonly disposeError?: string;
  /** junit.xml could not be written. */
  readonly junitError?: string;
  /** results.jsonl (or a shard's shard.json) could not be written. */
  readonly indexError?: string;
}

/**
 * Runs every (scenario, profile) of `plan` in order on one target opened for the suite. It stops
 * early, saying why (SuiteOutcome.incomplete), when `signal` aborts (after the current run; `now`
 * stops the target at once), when the target dies (the runs left are errors), after
 * `maxTargetFailures` runs ended in a target error, or when a run directory cannot be written.
 * The target is always stopped and junit.xml always written.
 */
export async function runSuite(plan: SuitePlan, o: SuiteOptions | SuiteOptions['progress'] = {}): Promise<SuiteOutcome> {
  const opts: SuiteOptions = typeof o === 'function' ? { progress: o } : o;
  const created = await prepareOut(plan.out, plan.force);
  // Under --force an earlier shard's identity must not outlive it: this suite is another one.
  if (plan.shard === undefined) await removeShardJson(plan.out);
  let host: SuiteTarget;
  try {
    host = await openSuiteTarget(plan.target, plan.reach, opts.signal);
  } catch (e) {
    await unprepareOut(plan.out, created); // no target, no run: leave nothing behind
    throw e;
  }
  const profiles: readonly (ProfileName | CpuProfile)[] = host.probed ? [host.probed] : plan.profiles;
  const sweep = plan.lastSeed !== undefined;
  const keep = plan.keep ?? (sweep ? 'failed' : 'all');
  const cells = suiteCells(plan, profiles);
  let lanes: Lane[];
  try {
    lanes = await openLanes(plan, host, Math.max(1, Math.min(plan.jobs ?? 1, cells.length)), opts.signal);
  } catch (e) {
    await Promise.resolve(host[Symbol.asyncDispose]()).catch(() => undefined);
    await unprepareOut(plan.out, created);
    throw e;
  }
  const dispose = (): Promise<void> => Promise.all(lanes.map((l) => l.dispose())).then(() => undefined);
  const stopNow = (): void => { void dispose().catch(() => undefined); };
  opts.now?.addEventListener('abort', stopNow, { once: true });
  opts.opened?.(host);
  const shardJson = plan.shard ? await shardJsonOf(plan, profiles.map((p) => (typeof p === 'string' ? p : p.name)), keep, cells.length) : undefined;
  const run = new SuiteRun(plan, cells, keep, opts);
  let timed: TimedResult[] = [];
  let disposeError: string | undefined, junitError: string | undefined, indexError: string | undefined;
  try {
    const shardError = shardJson && await writeShardJson(plan.out, shardJson).then(() => undefined, (e: unknown) => (e as Error).message);
    if (shardError !== undefined) run.stop({ cause: 'write-error', reason: `cannot write ${plan.out}/shard.json: ${shardError}` });
    else await run.runLanes(lanes);
    timed = run.finish();
  } finally {
    opts.now?.removeEventListener('abort', stopNow);
    // What the targets had to leave allocated (tracing not confirmed off) is said whatever happened.
    await dispose().catch((e: unknown) => { disposeError = run.disposeProblem(e); });
    ({ junitError, indexError } = await writeSuiteFiles(plan.out, timed, run.incomplete?.reason, sweep, shardJson));
  }
  // junit.xml and results.jsonl now list the runs made and the rest as not run; the command exits EXIT.internal.
  if (run.internal !== undefined) throw run.internal.error;
  const incomplete = run.incomplete;
  return {
    results: timed.map((t) => t.result), sections: run.sections,
    ...(incomplete ? { incomplete } : {}), ...(disposeError ? { disposeError } : {}), ...(junitError ? { junitError } : {}), ...(indexError ? { indexError } : {}),
  };
}

/** The suite's cells in the unsharded order (matrix.ts cellsOf), each with its run directory; a shard keeps its own. */
function suiteCells(plan: SuitePlan, profiles: readonly (ProfileName | CpuProfile)[]): SuiteCell[] {
  const sweep = plan.lastSeed !== undefined;
  const matrix = cellsOf({ seeds: seedRange(plan), scenarios: plan.scenarios, profiles }).map((c) => {
    const name = typeof c.profile === 'string' ? c.profile : c.profile.name;
    return { index: c.index, seed: c.seed, s: c.scenario, p: c.profile, name, dir: runDirOf(plan.out, c.scenario.name, name, sweep ? c.seed : undefined) };
  });
  return plan.shard ? cellsOfShard(matrix, plan.shard) : matrix;
}

/**
 * The suite files of a suite interrupted while its target opened (a Ctrl-C during a boot or an SSH
 * connect; runSuite threw PtError('aborted')): no run was made, and junit.xml and results.jsonl in
 * `plan.out` say so, marked incomplete, as any interrupted suite's do.
 */
export async function interruptedBeforeRuns(plan: SuitePlan, e: PtError): Promise<SuiteOutcome> {
  const cause = e.cause instanceof Error ? e.cause : e;
  const reason = `interrupted while opening the target, before any run (${cause.message})`;
  await mkdir(plan.out, { recursive: true });
  const written = await writeSuiteFiles(plan.out, [], reason, plan.lastSeed !== undefined);
  return { results: [], sections: new Map(), incomplete: { cause: 'interrupted', reason }, ...written };
}

/** junit.xml, results.jsonl (and a shard's shard.json) of the runs in `timed`; what could not be written, in words. */
async function writeSuiteFiles(
  out: string, timed: readonly TimedResult[], why: string | undefined, sweep: boolean, shardJson?: ShardJson,
): Promise<{ junitError?: string; indexError?: string }> {
  const errors: { junitError?: string; indexError?: string } = {};
  await replaceFile(join(out, 'junit.xml'), sweep ? junitSweepXml(timed, why) : junitXml(timed, why))
    .catch((e: unknown) => { errors.junitError = (e as Error).message; });
  await replaceFile(join(out, RESULTS_FILE), resultsIndexText(timed))
    .then(() => shardJson && writeShardJson(out, { ...shardJson, status: why === undefined ? 'done' : 'incomplete', runs: timed.length, ...(why === undefined ? {} : { incomplete: why }) }))
    .catch((e: unknown) => { errors.indexError = (e as Error).message; });
  return errors;
}

/**
 * The suite's lanes: `host` itself when `n` is 1; otherwise n worker threads on the sim, or
 * `host` and n-1 more VMs (qemu) or sessions (ssh), opened at once. Throws when one cannot be
 * opened, after stopping those that were.
 */
async function openLanes(plan: SuitePlan, host: SuiteTarget, n: number, signal: AbortSignal | undefined): Promise<Lane[]> {
  if (n === 1) return [targetLane(host)];
  // On the sim every lane is a worker thread: a run on the main thread would hold its event loop for
  // long stretches, and a worker whose run ended would wait that long for its next cell.
  if (plan.target === 'sim') {
    await host[Symbol.asyncDispose](); // nothing shared: each worker makes its own model per run
    return Array.from({ length: n }, () => simWorkerLane());
  }
  const more = await Promise.allSettled(lanesReach(plan.reach, host, n).map((reach) => openSuiteTarget(plan.target, reach, signal)));
  const opened = more.flatMap((x) => (x.status === 'fulfilled' ? [x.value] : []));
  const failed = more.find((x): x is PromiseRejectedResult => x.status === 'rejected');
  if (failed) {
    await Promise.all(opened.map((t) => Promise.resolve(t[Symbol.asyncDispose]()).catch(() => undefined)));
    throw failed.reason;
  }
  return [host, ...opened].map(targetLane);
}

/**
 * How each lane after the first reaches the target. On one lab machine's own PT every lane traces
 * on a CPU of its own (cpu-map.ts laneCpus: refused when there are fewer CPUs than lanes); a qemu
 * lane is a VM of its own, and a `pt: model` machine's runs trace on the model.
 */
function lanesReach(reach: TargetReach | undefined, host: SuiteTarget, n: number): (TargetReach | undefined)[] {
  if (reach?.kind !== 'ssh' || !(host instanceof HelperPtSuite)) return Array.from({ length: n - 1 }, () => reach);
  const cpus = laneCpus(host.machine, host.online, n, reach.cpus);
  return cpus.slice(1).map((c) => ({ ...reach, cpus: [c] }));
}

/** shard.json of a shard that starts: which shard, the matrix it was cut from and its fingerprint. */
async function shardJsonOf(plan: SuitePlan, profiles: readonly string[], keep: KeepRuns, shardCells: number): Promise<ShardJson> {
  const matrix: MatrixDef = {
    target: `${plan.reach?.kind === 'qemu' ? `qemu --pt ${plan.reach.pt}` : plan.target}${plan.realism && plan.realism !== 'frozen' ? ` --realism ${plan.realism}` : ''}`, sweep: plan.lastSeed !== undefined, keep,
    seeds: seedRange(plan), scenarios: plan.scenarios.map((s) => s.name), profiles,
    knobs: [...(plan.knobs ?? [])], driverFaults: [...(plan.driverFaults ?? [])],
  };
  const version = await ptlabVersion();
  return {
    format: SHARD_FORMAT, shard: plan.shard!.index, of: plan.shard!.count, ptlab: version, fingerprint: fingerprintOf(matrix, version),
    cells: cellsOf(matrix).length, shardCells, matrix, status: 'running',
  };
}
