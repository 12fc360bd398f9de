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
import { dirname, join, resolve } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import { TargetError } from '../link/errors.js';
import { junitSweepXml, junitXml, type TimedResult } from '../report/junit.js';
import { errorResult, isBad, isFailure, type ResultJson } from '../report/result.js';
import { RESULTS_FILE, resultsIndexText } from '../report/results-index.js';
import { prepareOut, removeEmptyDirs, unprepareOut } from '../report/out-dir.js';
import type { MadeSections } from '../report/html/suite-view.js';
import type { RunDetail } from '../report/html/view-model.js';
import type { DriverFault } from '../../driver/faults.js';
import type { KnobName } from '../sim/knobs/knobs.js';
import type { RealismMode } from '../sim/realism.js';
import type { CpuProfile, ProfileName } from '../sim/profiles.js';
import type { Scenario, TargetKind } from '../scenarios/kit/scenario.js';
import { cellsOf, fingerprintOf, type MatrixDef } from './matrix.js';
import type { KeepRuns } from './run-scenario.js';
import { cellsOfShard, removeShardJson, SHARD_FORMAT, writeShardJson, type ShardJson, type ShardSpec } from './shard.js';
import { cpuBusy, openSuiteTarget, targetFailure, type SuiteTarget } from './suite-target.js';
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
  /** Runs ending in a target failure after which the suite stops (default DEFAULT_MAX_TARGET_FAILURES). */
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

/** Why a suite stopped before its end, for the summary, junit.xml and the exit status. */
export interface Incomplete {
  readonly cause: 'interrupted' | 'target-died' | 'target-failures' | 'write-error' | 'internal' | 'cpu-busy';
  readonly reason: string;
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

/** Target failures (runs ending in a target error) after which a suite stops by default (--max-target-failures). */
export const DEFAULT_MAX_TARGET_FAILURES = 3;

/** errno codes of a run directory that cannot be written: the suite stops, it does not crash. */
const WRITE_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'EFBIG', 'EACCES', 'EPERM']);

function isWriteError(e: unknown): e is NodeJS.ErrnoException {
  return e instanceof Error && WRITE_ERRORS.has((e as NodeJS.ErrnoException).code ?? '');
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
  const progress = opts.progress ?? (() => undefined);
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
  const maxFailures = plan.maxTargetFailures ?? DEFAULT_MAX_TARGET_FAILURES;
  // The cells in the unsharded order (matrix.ts cellsOf); a shard keeps its own.
  const matrix = cellsOf({ seeds: seedRange(plan), scenarios: plan.scenarios, profiles })
    .map((c) => ({ index: c.index, seed: c.seed, s: c.scenario, p: c.profile, name: typeof c.profile === 'string' ? c.profile : c.profile.name }));
  const jobs = plan.shard ? cellsOfShard(matrix, plan.shard) : matrix;
  let lanes: Lane[];
  try {
    lanes = await openLanes(plan, host, Math.max(1, Math.min(plan.jobs ?? 1, jobs.length)), opts.signal);
  } catch (e) {
    await Promise.resolve(host[Symbol.asyncDispose]()).catch(() => undefined);
    await unprepareOut(plan.out, created);
    throw e;
  }
  const dispose = (): Promise<void> => Promise.all(lanes.map((l) => l.dispose())).then(() => undefined);
  const stopNow = (): void => { void dispose().catch(() => undefined); };
  opts.now?.addEventListener('abort', stopNow, { once: true });
  opts.opened?.(host);
  const shardJson = plan.shard ? await shardJsonOf(plan, profiles.map((p) => (typeof p === 'string' ? p : p.name)), keep, jobs.length) : undefined;
  const baseOf = (j: typeof jobs[number]) => ({ scenario: j.s.name, target: plan.target, profile: j.name, seed: j.seed });
  // Results by cell: the suite's files list them in cell order whatever order the lanes finish in.
  const byCell: (TimedResult | undefined)[] = new Array(jobs.length);
  const sections = new Map<string, RunDetail>();
  const leftPerSeed = new Map<number, number>();
  for (const j of jobs) leftPerSeed.set(j.seed, (leftPerSeed.get(j.seed) ?? 0) + 1);
  let incomplete: Incomplete | undefined, disposeError: string | undefined, junitError: string | undefined, indexError: string | undefined, targetFailures = 0;
  let next = 0, finished = 0, stopped = false, notRun: string | undefined;
  /** The error of a lane that failed for no reason the suite knows (a bug in ptlab), thrown once the suite's files are written. */
  let internal: { readonly error: unknown } | undefined;
  /** One lane: takes the next cell until none is left or the suite stops. */
  const laneLoop = async (lane: Lane): Promise<void> => {
    while (!stopped) {
      if (opts.signal?.aborted || opts.now?.aborted) {
        incomplete ??= { cause: 'interrupted', reason: `interrupted after ${finished} of ${jobs.length} runs` };
        stopped = true;
        return;
      }
      const i = next++;
      if (i >= jobs.length) return;
      const job = jobs[i]!;
      const { seed, s, p, name } = job;
      const t0 = performance.now();
      const spec = { scenario: s, target: plan.target, profile: p, seed, knobs: plan.knobs ?? [], driverFaults: plan.driverFaults ?? [], ...(plan.realism ? { realism: plan.realism } : {}) };
      const dir = runDirOf(plan.out, s.name, name, sweep ? seed : undefined);
      // The directories a run without a directory of its own must not leave behind (never --out itself).
      const leaveNoEmptyDirs = (): Promise<void> => removeEmptyDirs(dirname(dir), sweep ? join(plan.out, `seed-${seed}`) : dirname(dir));
      let r: ResultJson;
      try {
        const ran = await lane.run(spec, dir, keep);
        r = ran.result;
        if (ran.section) sections.set(resolve(dir), ran.section);
      } catch (e) {
        // Preparing the CPU (or writing the run) failed: the target's fault, or the disk's.
        const lost = lane.lost(), failed = targetFailure(e), busy = cpuBusy(e);
        if (busy !== undefined) {
          // Someone else traces on the CPU: no run can be made on it (claim.ts), so the suite stops here.
          incomplete ??= { cause: 'cpu-busy', reason: busy };
          notRun ??= busy;
          stopped = true;
          byCell[i] = { result: errorResult(baseOf(job), `not run: ${busy}`), ms: 0 };
          return;
        }
        if (isWriteError(e)) {
          incomplete ??= { cause: 'write-error', reason: `cannot write the run directory ${dir}: ${e.message}` };
          stopped = true;
          await leaveNoEmptyDirs().catch(() => undefined);
          return;
        }
        if (opts.now?.aborted) {
          // Stopped at once (a second signal): the target was disposed under this run, whatever it threw then.
          incomplete ??= { cause: 'interrupted', reason: `interrupted during ${s.name} (${name}, seed ${seed}), after ${finished} of ${jobs.length} runs` };
          stopped = true;
          byCell[i] = { result: errorResult(baseOf(job), `not run: stopped at once (a second signal): ${incomplete.reason}`), ms: Math.round(performance.now() - t0) };
          await leaveNoEmptyDirs().catch(() => undefined);
          return;
        }
        if (lost === undefined && failed === undefined) {
          // ptlab's own failure (a bug): the suite stops, its files say so, and the error goes on up.
          stopped = true;
          await leaveNoEmptyDirs().catch(() => undefined);
          throw e;
        }
        r = errorResult(baseOf(job), lost !== undefined ? `the target died: ${lost}` : `the target failed: ${failed!}`);
      }
      // A run that kept no directory leaves no empty seed-<S>/<scenario>/ behind either.
      if (keep === 'failed' && !isBad(r.verdict)) await leaveNoEmptyDirs();
      // A sweep holds thousands of results: a run that did not fail keeps only its verdict.
      const ms = Math.round(performance.now() - t0);
      byCell[i] = { result: sweep && !isBad(r.verdict) ? { ...r, expectations: [], figures: {} } : r, ms };
      const left = leftPerSeed.get(seed)! - 1;
      leftPerSeed.set(seed, left);
      progress(r, ++finished, jobs.length, ms, left === 0);
      // A corrupt run may have lost its target too (corrupt wins over error): a dead target still stops the suite.
      if ((r.verdict === 'error' || (r.verdict === 'corrupt' && lane.lost() !== undefined)) && !opts.now?.aborted) {
        const lost = lane.lost();
        targetFailures++;
        const why = lost !== undefined ? `the target died during ${s.name} (${name}, seed ${seed}): ${lost}`
          : targetFailures >= maxFailures ? `${targetFailures} runs ended in a target failure (--max-target-failures ${maxFailures})` : undefined;
        if (why !== undefined) {
          incomplete ??= { cause: lost !== undefined ? 'target-died' : 'target-failures', reason: why };
          notRun ??= why;
          stopped = true;
          return;
        }
      }
      if (plan.failFast && isFailure(r.verdict)) { stopped = true; return; }
    }
  };
  const timed: TimedResult[] = [];
  try {
    const shardError = shardJson && await writeShardJson(plan.out, shardJson).then(() => undefined, (e: unknown) => (e as Error).message);
    if (shardError !== undefined) incomplete = { cause: 'write-error', reason: `cannot write ${plan.out}/shard.json: ${shardError}` };
    if (!incomplete) {
      const outcomes = await Promise.allSettled(lanes.map(laneLoop));
      const thrown = outcomes.find((x): x is PromiseRejectedResult => x.status === 'rejected');
      if (thrown) {
        internal = { error: thrown.reason };
        const why = `ptlab itself failed: ${thrown.reason instanceof Error ? thrown.reason.message : String(thrown.reason)}`;
        incomplete ??= { cause: 'internal', reason: why };
        notRun ??= why;
      }
    }
    for (const [i, t] of byCell.entries()) {
      if (t) timed.push(t);
      // A cell made but without a result is the one ptlab failed in.
      else if (notRun !== undefined) timed.push({ result: errorResult(baseOf(jobs[i]!), i >= next ? `not run: ${notRun}` : notRun), ms: 0 });
    }
  } finally {
    opts.now?.removeEventListener('abort', stopNow);
    // A dead target's stop complains about how it died; that is already the suite's reason. What it
    // had to leave allocated (tracing not confirmed off) is said whatever happened.
    await dispose().catch((e: unknown) => {
      if (incomplete?.cause !== 'target-died' || (e instanceof TargetError && e.phase === 'shutdown')) disposeError = (e as Error).message;
    });
    const why = incomplete?.reason;
    ({ junitError, indexError } = await writeSuiteFiles(plan.out, timed, why, sweep, shardJson));
  }
  // junit.xml and results.jsonl now list the runs made and the rest as not run; the command exits EXIT.internal.
  if (internal !== undefined) throw internal.error;
  return {
    results: timed.map((t) => t.result), sections,
    ...(incomplete ? { incomplete } : {}), ...(disposeError ? { disposeError } : {}), ...(junitError ? { junitError } : {}), ...(indexError ? { indexError } : {}),
  };
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
