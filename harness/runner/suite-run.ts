// One suite while its lanes run (suite.ts runSuite): each lane claims the next cell, runs it and
// records its result, until the cells run out or the suite stops — interrupted, the target dead or
// failing too often, a run directory that cannot be written, a CPU someone else traces on, the
// first failure under --fail-fast, or a failure of ptlab's own. What stopped it, and every cell's
// result in cell order, are the suite's files' content (junit.xml, results.jsonl).
import { dirname, join, resolve } from 'node:path';
import { TargetError } from '../link/errors.js';
import type { RunDetail } from '../report/html/view-model.js';
import { errorResult, isBad, isFailure, type ResultJson } from '../rundir/result.js';
import type { TimedResult } from '../rundir/results-index.js';
import type { CpuProfile, ProfileName } from '../sim/profiles.js';
import type { Scenario } from '../scenarios/kit/scenario.js';
import { removeEmptyDirs } from '../report/out-dir.js';
import type { Lane } from './lanes.js';
import type { KeepRuns, RunSpec } from './run-scenario.js';
import { cpuBusy, targetFailure } from './suite-target.js';
import type { SuiteOptions, SuitePlan } from './suite.js';

/** Why a suite stopped before its end, for the summary, junit.xml and the exit status. */
export interface Incomplete {
  readonly cause: 'interrupted' | 'target-died' | 'target-failures' | 'write-error' | 'internal' | 'cpu-busy';
  readonly reason: string;
}

/** One cell of the suite: (seed, scenario, profile), its index in the unsharded matrix and its run directory. */
export interface SuiteCell {
  readonly index: number;
  readonly seed: number;
  readonly s: Scenario;
  readonly p: ProfileName | CpuProfile;
  /** The profile's name. */
  readonly name: string;
  readonly dir: string;
}

/** Target failures (runs ending in a target error) after which a suite stops by default (--max-target-failures). */
export const DEFAULT_MAX_TARGET_FAILURES = 3;

/** errno codes of a run directory that cannot be written: the suite stops, it does not crash. */
const WRITE_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'EFBIG', 'EACCES', 'EPERM']);

function isWriteError(e: unknown): e is NodeJS.ErrnoException {
  return e instanceof Error && WRITE_ERRORS.has((e as NodeJS.ErrnoException).code ?? '');
}

/** The state of a running suite; see the file comment. */
export class SuiteRun {
  /** Set when the suite stopped early (its junit.xml says so too). */
  incomplete: Incomplete | undefined;
  /** The error of a lane that failed for no reason the suite knows (a bug in ptlab), thrown once the suite's files are written. */
  internal: { readonly error: unknown } | undefined;
  /** The report sections the lanes made as runs ended, by run directory (absolute). */
  readonly sections = new Map<string, RunDetail>();
  /** Results by cell: the suite's files list them in cell order whatever order the lanes finish in. */
  private readonly byCell: (TimedResult | undefined)[];
  private readonly leftPerSeed = new Map<number, number>();
  private readonly sweep: boolean;
  private readonly maxFailures: number;
  /** The next cell to claim, cells finished, runs that ended in a target failure. */
  private next = 0;
  private finished = 0;
  private targetFailures = 0;
  private stopped = false;
  /** Why the cells without a result were not run (set by the causes that leave cells behind). */
  private notRun: string | undefined;

  constructor(private readonly plan: SuitePlan, private readonly cells: readonly SuiteCell[], private readonly keep: KeepRuns, private readonly opts: SuiteOptions) {
    this.byCell = new Array(cells.length);
    this.sweep = plan.lastSeed !== undefined;
    this.maxFailures = plan.maxTargetFailures ?? DEFAULT_MAX_TARGET_FAILURES;
    for (const c of cells) this.leftPerSeed.set(c.seed, (this.leftPerSeed.get(c.seed) ?? 0) + 1);
  }

  /** Runs `lanes` until every cell is claimed or the suite stops; a lane that threw is ptlab's own failure (`internal`). */
  async runLanes(lanes: readonly Lane[]): Promise<void> {
    const outcomes = await Promise.allSettled(lanes.map((l) => this.lane(l)));
    const thrown = outcomes.find((x): x is PromiseRejectedResult => x.status === 'rejected');
    if (!thrown) return;
    this.internal = { error: thrown.reason };
    const why = `ptlab itself failed: ${thrown.reason instanceof Error ? thrown.reason.message : String(thrown.reason)}`;
    this.stop({ cause: 'internal', reason: why }, why);
  }

  /** One lane: takes the next cell until none is left or the suite stops. */
  private async lane(lane: Lane): Promise<void> {
    for (let i = this.claim(); i !== undefined; i = this.claim()) {
      const t0 = performance.now();
      const r = await this.run(lane, i, t0);
      if (r === undefined || !(await this.record(lane, i, r, t0))) return;
    }
  }

  /** The next cell's index, or undefined when none is left or the suite stopped (a signal stops it here). */
  private claim(): number | undefined {
    if (this.stopped) return undefined;
    if (this.opts.signal?.aborted || this.opts.now?.aborted) {
      this.stop({ cause: 'interrupted', reason: `interrupted after ${this.finished} of ${this.cells.length} runs` });
      return undefined;
    }
    const i = this.next++;
    return i < this.cells.length ? i : undefined;
  }

  /** Runs cell `i` on `lane`: its result, or undefined when the suite stops with this cell (`failed`). */
  private async run(lane: Lane, i: number, t0: number): Promise<ResultJson | undefined> {
    const { dir } = this.cells[i]!;
    try {
      const ran = await lane.run(this.specOf(this.cells[i]!), dir, this.keep);
      if (ran.section) this.sections.set(resolve(dir), ran.section);
      return ran.result;
    } catch (e) {
      return this.failed(lane, i, e, t0);
    }
  }

  /**
   * Preparing the CPU (or writing the run) threw: the target's fault, or the disk's. A target error
   * is the cell's result; a busy CPU, a run directory that cannot be written or a stop at once stop
   * the suite here (undefined); anything else is ptlab's own failure, thrown on.
   */
  private async failed(lane: Lane, i: number, e: unknown, t0: number): Promise<ResultJson | undefined> {
    const c = this.cells[i]!;
    const lost = lane.lost(), failed = targetFailure(e), busy = cpuBusy(e);
    if (busy !== undefined) {
      // Someone else traces on the CPU: no run can be made on it (claim.ts), so the suite stops here.
      this.stop({ cause: 'cpu-busy', reason: busy }, busy);
      this.byCell[i] = { result: errorResult(this.baseOf(c), `not run: ${busy}`), ms: 0 };
      return undefined;
    }
    if (isWriteError(e)) {
      this.stop({ cause: 'write-error', reason: `cannot write the run directory ${c.dir}: ${e.message}` });
      await this.leaveNoEmptyDirs(c).catch(() => undefined);
      return undefined;
    }
    if (this.opts.now?.aborted) {
      // Stopped at once (a second signal): the target was disposed under this run, whatever it threw then.
      const { reason } = this.stop({ cause: 'interrupted', reason: `interrupted during ${c.s.name} (${c.name}, seed ${c.seed}), after ${this.finished} of ${this.cells.length} runs` });
      this.byCell[i] = { result: errorResult(this.baseOf(c), `not run: stopped at once (a second signal): ${reason}`), ms: Math.round(performance.now() - t0) };
      await this.leaveNoEmptyDirs(c).catch(() => undefined);
      return undefined;
    }
    if (lost === undefined && failed === undefined) {
      // ptlab's own failure (a bug): the suite stops, its files say so, and the error goes on up.
      this.stopped = true;
      await this.leaveNoEmptyDirs(c).catch(() => undefined);
      throw e;
    }
    return errorResult(this.baseOf(c), lost !== undefined ? `the target died: ${lost}` : `the target failed: ${failed!}`);
  }

  /** Records cell `i`'s result `r` and says it on `progress`; false when the suite stops after it. */
  private async record(lane: Lane, i: number, r: ResultJson, t0: number): Promise<boolean> {
    const c = this.cells[i]!;
    // A run that kept no directory leaves no empty seed-<S>/<scenario>/ behind either.
    if (this.keep === 'failed' && !isBad(r.verdict)) await this.leaveNoEmptyDirs(c);
    // A sweep holds thousands of results: a run that did not fail keeps only its verdict.
    const ms = Math.round(performance.now() - t0);
    this.byCell[i] = { result: this.sweep && !isBad(r.verdict) ? { ...r, expectations: [], figures: {} } : r, ms };
    const left = this.leftPerSeed.get(c.seed)! - 1;
    this.leftPerSeed.set(c.seed, left);
    this.opts.progress?.(r, ++this.finished, this.cells.length, ms, left === 0);
    // A corrupt run may have lost its target too (corrupt wins over error): a dead target still stops the suite.
    if ((r.verdict === 'error' || (r.verdict === 'corrupt' && lane.lost() !== undefined)) && !this.opts.now?.aborted) {
      const lost = lane.lost();
      this.targetFailures++;
      const why = lost !== undefined ? `the target died during ${c.s.name} (${c.name}, seed ${c.seed}): ${lost}`
        : this.targetFailures >= this.maxFailures ? `${this.targetFailures} runs ended in a target failure (--max-target-failures ${this.maxFailures})` : undefined;
      if (why !== undefined) {
        this.stop({ cause: lost !== undefined ? 'target-died' : 'target-failures', reason: why }, why);
        return false;
      }
    }
    if (this.plan.failFast && isFailure(r.verdict)) { this.stopped = true; return false; }
    return true;
  }

  /**
   * Stops the suite: no lane claims another cell. The first cause given is the suite's; `notRun`,
   * the first given, is what the cells left without a result say. Returns the suite's cause.
   */
  stop(cause: Incomplete, notRun?: string): Incomplete {
    this.incomplete ??= cause;
    if (notRun !== undefined) this.notRun ??= notRun;
    this.stopped = true;
    return this.incomplete;
  }

  /** Every cell's result in cell order; a cell without one is not run (or, claimed, the one ptlab failed in) when the suite stopped for it. */
  finish(): TimedResult[] {
    const timed: TimedResult[] = [];
    for (const [i, t] of this.byCell.entries()) {
      if (t) timed.push(t);
      // A cell made but without a result is the one ptlab failed in.
      else if (this.notRun !== undefined) timed.push({ result: errorResult(this.baseOf(this.cells[i]!), i >= this.next ? `not run: ${this.notRun}` : this.notRun), ms: 0 });
    }
    return timed;
  }

  /**
   * What stopping the lanes' targets threw, as the suite reports it: a dead target's stop complains
   * about how it died, which is already the suite's reason, unless its shutdown itself failed.
   */
  disposeProblem(e: unknown): string | undefined {
    return this.incomplete?.cause !== 'target-died' || (e instanceof TargetError && e.phase === 'shutdown') ? (e as Error).message : undefined;
  }

  private specOf(c: SuiteCell): RunSpec {
    const plan = this.plan;
    return { scenario: c.s, target: plan.target, profile: c.p, seed: c.seed, knobs: plan.knobs ?? [], driverFaults: plan.driverFaults ?? [], ...(plan.realism ? { realism: plan.realism } : {}) };
  }

  private baseOf(c: SuiteCell): Pick<ResultJson, 'scenario' | 'target' | 'profile' | 'seed'> {
    return { scenario: c.s.name, target: this.plan.target, profile: c.name, seed: c.seed };
  }

  /** The directories a run without a directory of its own must not leave behind (never --out itself). */
  private leaveNoEmptyDirs(c: SuiteCell): Promise<void> {
    return removeEmptyDirs(dirname(c.dir), this.sweep ? join(this.plan.out, `seed-${c.seed}`) : dirname(c.dir));
  }
}
