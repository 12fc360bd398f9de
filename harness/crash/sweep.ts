// The crash-point sweep (docs/design.md "The crash-point sweep"): every scenario on the chosen
// profiles is run once clean, counting its target operations; then once for each operation k, with
// the k-th one failing (inject.ts: throw, timeout, abort or drop, the mode rotating with k). After
// each run the model behind the injector is read (crash-suite.ts) and held to the invariant of
// docs/design.md "The invariant": no memory-oracle event, TraceEn=0 on every CPU the link still
// reaches, and nothing allocated that the run does not report as leaked.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import type { DriverFault } from '../../driver/faults.js';
import type { ResultJson } from '../rundir/result.js';
import { runScenario } from '../runner/run-scenario.js';
import type { Scenario } from '../scenarios/kit/scenario.js';
import type { ProfileName } from '../sim/profiles.js';
import { CrashSuite, type ModelAfterRun } from './crash-suite.js';
import { addToCheckpoint, pairKey, planKey, readCheckpoint } from './checkpoint.js';
import { CRASH_MODES, type CrashMode } from './inject.js';

/** What to sweep. */
export interface CrashSweepPlan {
  readonly scenarios: readonly Scenario[];
  readonly profiles: readonly ProfileName[];
  readonly seed: number;
  /** The modes, taken in turn as k rises (k = 1 gets the first). Default all four. */
  readonly modes?: readonly CrashMode[];
  /** Every mode at every k instead of one mode per k. */
  readonly everyMode?: boolean;
  /** At most this many points per run, spread evenly over 1..N (default: every k). */
  readonly maxPoints?: number;
  /** Scratch directory for the run directories (removed, except those of violations). */
  readonly out: string;
  /** Deliberate driver bugs (driver/faults.ts): the sweep's negative control (free-before-disable must be found). */
  readonly driverFaults?: readonly DriverFault[];
  /** Told of every run made. */
  readonly progress?: (p: CrashPointResult) => void;
  readonly signal?: AbortSignal;
  /**
   * A file of scenario × profile pairs already swept (one JSON line each: checkpoint.ts): pairs
   * it holds for this plan are not swept again but counted from there, and each pair swept now is
   * added as it ends, so that a sweep stopped part-way goes on where it stopped.
   */
  readonly checkpoint?: string;
}

/** Why a crash point broke the invariant. */
export type Violation =
  /** The memory oracle saw PT reach memory the driver does not own. */
  | 'corrupt'
  /** TraceEn was still 1 on a CPU the link could still reach. */
  | 'traceen-left'
  /** Memory was still allocated that the run did not report as leaked. */
  | 'unaccounted'
  /** ptlab itself threw. */
  | 'internal';

/** One run of the sweep. */
export interface CrashPointResult {
  readonly scenario: string;
  readonly profile: string;
  /** 0 for the clean run that counts the operations. */
  readonly at: number;
  readonly of: number;
  readonly mode?: CrashMode;
  readonly hit?: string;
  readonly verdict: string;
  readonly leakedBytes: number;
  readonly model?: ModelAfterRun;
  readonly violations: readonly Violation[];
  readonly detail?: string;
}

/** What the sweep found. */
export interface CrashSweepSummary {
  readonly runs: number;
  /** Injected runs per mode. */
  readonly byMode: Readonly<Record<CrashMode, number>>;
  readonly corruptEvents: number;
  readonly traceEnLeft: number;
  /** TraceEn still 1 after a `drop` (the link was gone: it could not be cleared, and everything was leaked). */
  readonly traceEnLeftDeadLink: number;
  readonly unaccountedBytes: number;
  readonly leakedBytes: number;
  readonly violations: readonly CrashPointResult[];
  /** Runs whose clean run did not pass (their points were not swept). */
  readonly notSwept: readonly string[];
}

/** The points 1..n, or `max` of them spread evenly (always the first and the last). */
export function crashPoints(n: number, max?: number): number[] {
  if (max === undefined || n <= max) return Array.from({ length: n }, (_, i) => i + 1);
  if (max < 2) return [1];
  const out = new Set<number>();
  for (let i = 0; i < max; i++) out.add(1 + Math.round((i * (n - 1)) / (max - 1)));
  return [...out].sort((a, b) => a - b);
}

/** Nothing swept: the sum of no pairs. */
const NOTHING: CrashSweepSummary = {
  runs: 0, byMode: Object.fromEntries(CRASH_MODES.map((m) => [m, 0])) as Record<CrashMode, number>, corruptEvents: 0, traceEnLeft: 0,
  traceEnLeftDeadLink: 0, unaccountedBytes: 0, leakedBytes: 0, violations: [], notSwept: [],
};

/** The sum of several sweeps' summaries (pairs, or the parts of a sweep made by several processes). */
export function mergeSummaries(parts: readonly CrashSweepSummary[]): CrashSweepSummary {
  const sum = (f: (p: CrashSweepSummary) => number): number => parts.reduce((n, p) => n + f(p), 0);
  return {
    runs: sum((p) => p.runs), byMode: Object.fromEntries(CRASH_MODES.map((m) => [m, sum((p) => p.byMode[m])])) as Record<CrashMode, number>,
    corruptEvents: sum((p) => p.corruptEvents), traceEnLeft: sum((p) => p.traceEnLeft), traceEnLeftDeadLink: sum((p) => p.traceEnLeftDeadLink),
    unaccountedBytes: sum((p) => p.unaccountedBytes), leakedBytes: sum((p) => p.leakedBytes),
    violations: parts.flatMap((p) => p.violations), notSwept: parts.flatMap((p) => p.notSwept),
  };
}

/** Runs the sweep; see the file comment. */
export async function crashSweep(plan: CrashSweepPlan): Promise<CrashSweepSummary> {
  const modes = plan.modes ?? CRASH_MODES;
  if (modes.length === 0) throw new PtError('bad_config', 'no crash mode to sweep');
  const suite = new CrashSuite();
  await mkdir(plan.out, { recursive: true });
  const done = plan.checkpoint === undefined ? new Map<string, CrashSweepSummary>() : await readCheckpoint(plan.checkpoint, planKey(plan, modes));
  let dirNo = 0;
  const one = async (s: Scenario, profile: ProfileName, at: number, of: number, mode: CrashMode | undefined): Promise<CrashPointResult> => {
    const abort = new AbortController();
    suite.injection = mode === undefined ? undefined : { at, mode, abort };
    const dir = join(plan.out, `${s.name}-${profile}-${at}${mode ? `-${mode}` : ''}-${dirNo++}`);
    let r: ResultJson | undefined, detail: string | undefined;
    try {
      r = await runScenario({ scenario: s, target: 'sim', profile, seed: plan.seed, signal: abort.signal, ...(plan.driverFaults ? { driverFaults: plan.driverFaults } : {}) }, dir, suite);
    } catch (e) {
      detail = `${(e as Error).name}: ${(e as Error).message}`;
    }
    const m = suite.after;
    const sum = (l: readonly { size: number }[]): number => l.reduce((n, b) => n + b.size, 0);
    // Buffers reported by address must still be there; an allocation reported lost (no address) may or may not be.
    const known = sum((r?.leaked ?? []).filter((b) => b.base !== undefined)), maybe = sum((r?.leaked ?? []).filter((b) => b.base === undefined));
    const leaked = known + maybe;
    const v: Violation[] = [];
    if (r === undefined) v.push('internal');
    if (m && m.corrupt > 0) v.push('corrupt');
    if (m && m.tracing.length > 0 && mode !== 'drop') v.push('traceen-left');
    if (m && (m.allocated < known || m.allocated > known + maybe)) v.push('unaccounted');
    const res: CrashPointResult = {
      scenario: s.name, profile, at, of, ...(mode ? { mode } : {}), ...(m?.hit ? { hit: m.hit } : {}), verdict: r?.verdict ?? 'thrown',
      leakedBytes: leaked, ...(m ? { model: m } : {}), violations: v,
      ...(detail ?? (v.length ? r?.reason : undefined) ? { detail: detail ?? r?.reason } : {}),
    };
    if (v.length === 0) await rm(dir, { recursive: true, force: true });
    return res;
  };
  /** One scenario on one profile: its clean run, then each of its crash points. */
  const pair = async (s: Scenario, profile: ProfileName): Promise<CrashSweepSummary> => {
    const clean = await one(s, profile, 0, 0, undefined);
    if (clean.verdict === 'skip') return NOTHING;
    plan.progress?.(clean);
    if (clean.verdict !== 'pass' || clean.violations.length) {
      return { ...NOTHING, notSwept: [`${s.name} on ${profile}: the clean run was ${clean.verdict}${clean.detail ? ` (${clean.detail})` : ''}`] };
    }
    const byMode = { ...NOTHING.byMode };
    const violations: CrashPointResult[] = [];
    let runs = 0, corruptEvents = 0, traceEnLeft = 0, traceEnLeftDeadLink = 0, unaccountedBytes = 0, leakedBytes = 0;
    const n = clean.model?.ops ?? 0;
    for (const at of crashPoints(n, plan.maxPoints)) {
      for (const mode of plan.everyMode ? modes : [modes[(at - 1) % modes.length]!]) {
        if (plan.signal?.aborted) throw new PtError('aborted', 'crash-point sweep interrupted');
        const res = await one(s, profile, at, n, mode);
        runs++;
        byMode[mode]++;
        corruptEvents += res.model?.corrupt ?? 0;
        if (res.violations.includes('traceen-left')) traceEnLeft++;
        if (mode === 'drop' && (res.model?.tracing.length ?? 0) > 0) traceEnLeftDeadLink++;
        if (res.violations.includes('unaccounted')) unaccountedBytes += Math.abs((res.model?.allocated ?? 0) - res.leakedBytes);
        leakedBytes += res.leakedBytes;
        if (res.violations.length) violations.push(res);
        plan.progress?.(res);
      }
    }
    return { runs, byMode, corruptEvents, traceEnLeft, traceEnLeftDeadLink, unaccountedBytes, leakedBytes, violations, notSwept: [] };
  };
  const parts: CrashSweepSummary[] = [];
  for (const s of plan.scenarios) {
    for (const profile of plan.profiles) {
      if (plan.signal?.aborted) throw new PtError('aborted', 'crash-point sweep interrupted');
      const key = pairKey(s.name, profile);
      let summary = done.get(key);
      if (summary === undefined) {
        summary = await pair(s, profile);
        if (plan.checkpoint !== undefined) await addToCheckpoint(plan.checkpoint, planKey(plan, modes), key, summary);
      }
      parts.push(summary);
    }
  }
  return mergeSummaries(parts);
}
