// Runs one scenario on one target/profile/seed: wraps the
// target in RecordingTarget, runs the sequence, writes the artifacts, checks
// `ptlab flow` against truth.jsonl on the exported files, decides the verdict
// and commits the run directory in one rename. The CPU comes from the suite's
// target (suite-target.ts): a fresh sim, the qemu guest's model reset for the
// run, or a real PT unit.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import { hex } from '../../driver/base/hex.js';
import { leaf14 } from '../../driver/probe.js';
import { probe } from '../../driver/probe.js';
import { RecordingTarget } from '../rundir/recording-target.js';
import type { DriverFault } from '../../driver/faults.js';
import type { KnobName } from '../sim/knobs/knobs.js';
import type { RealismMode } from '../sim/realism.js';
import { capsOf, getProfile, type CpuProfile, type ProfileName } from '../sim/profiles.js';
import { ScenarioContext } from '../scenarios/kit/context.js';
import type { Scenario, ScenarioEnv, SimSettings, TargetKind } from '../scenarios/kit/scenario.js';
import { errorResult, isBad, verdictOf, type ResultJson } from '../rundir/result.js';
import { RunGuard } from './run-guard.js';
import { commit, discard, stage } from '../rundir/stage.js';
import { RUN_FILES } from '../rundir/run-files.js';
import { writeArtifacts, writeVerdict, type RunArtifacts } from '../rundir/write-run.js';
import { identityOf, libiptCommands, vendorOf, type CpuIdentity, type TraceTiming } from '../rundir/interop.js';
import { DEFAULT_CLOCK } from '../sim/trace/clock.js';
import { compareFlowWithTruth } from './flow-check.js';
import { SimSuiteTarget, targetFailure, type RunCpu, type SuiteTarget } from './suite-target.js';
import { runModelOptions } from './targets.js';

/** One run to make. */
export interface RunSpec {
  readonly scenario: Scenario;
  readonly target: TargetKind;
  /** A model profile name, or a real CPU's probed profile (probed-profile.ts). */
  readonly profile: ProfileName | CpuProfile;
  readonly seed: number;
  /** Model knobs (negative controls; sim only). */
  readonly knobs?: readonly KnobName[];
  /** Driver faults (negative controls of the driver; any target). */
  readonly driverFaults?: readonly DriverFault[];
  /**
   * Aborts the run: the driver's sessions stop at their next call, and their teardown still runs
   * (docs/design.md "The invariant"). Not recorded in result.json.
   */
  readonly signal?: AbortSignal;
  /** How close to a lab machine the model runs (`--realism`: harness/sim/realism.ts). Default frozen. */
  readonly realism?: RealismMode;
}

/** Which run directories are kept: every one, or only those of failed runs (a seed sweep). */
export type KeepRuns = 'all' | 'failed';

/**
 * Runs `spec` on `on` (a new sim target by default) and writes its run directory at `dir`;
 * returns result.json's content. With `keep: 'failed'` a run that passes or skips leaves no
 * directory (it is staged and discarded).
 */
export async function runScenario(spec: RunSpec, dir: string, on: SuiteTarget = new SimSuiteTarget(), keep: KeepRuns = 'all'): Promise<ResultJson> {
  const { scenario, target } = spec;
  if (on.kind !== target) throw new PtError('bad_config', `run of ${scenario.name} is for the ${target} target, but the suite's target is ${on.kind}`);
  const run = runOf(spec, on);
  const tmp = await stage(dir);
  // The one cleanup path of the run directory: whatever throws, the staging directory goes.
  try {
    // Where the model is the PT unit, the sim's applicability rules hold (suite-target.ts `rules`).
    const skip = !scenario.targets.includes(on.rules) ? `does not run on the ${target} target` : scenario.skip(run.env);
    const r = skip === undefined ? await traced(run, tmp) : { ...run.base, ...verdictOf([], skip), expectations: [], figures: {} };
    await writeVerdict(tmp, r);
    if (keep === 'failed' && !isBad(r.verdict)) await discard(tmp);
    else await commit(tmp, dir);
    return r;
  } catch (e) {
    await discard(tmp);
    throw e;
  }
}

/** What a run is, before it has a CPU. */
interface Run {
  readonly spec: RunSpec;
  readonly on: SuiteTarget;
  readonly p: CpuProfile;
  readonly env: ScenarioEnv;
  readonly base: Pick<ResultJson, 'scenario' | 'target' | 'profile' | 'seed'>;
  readonly knobs: readonly KnobName[];
  readonly faults: readonly DriverFault[];
  readonly realism: RealismMode;
  /** The model settings the run's CPU is prepared with. */
  readonly settings: SimSettings;
}

/** A run on its prepared CPU: its custody, recorder and memory oracle (run-guard.ts) and its scenario context. */
interface OnCpu extends Run {
  readonly cpu: RunCpu;
  readonly guard: RunGuard;
  readonly ctx: ScenarioContext;
  /** Gives the CPU back once (RunCpu.release); later calls do nothing. */
  readonly release: () => Promise<void>;
  readonly tmp: string;
}

function runOf(spec: RunSpec, on: SuiteTarget): Run {
  const { scenario, target, seed } = spec;
  const p = typeof spec.profile === 'string' ? getProfile(spec.profile) : spec.profile;
  const faults = spec.driverFaults ?? [];
  const realism = spec.realism ?? 'frozen';
  const env: ScenarioEnv = {
    target, ptUnit: on.rules === 'sim' ? 'model' : 'hardware', profile: p, caps: capsOf(p), seed, ...(faults.length ? { driverFaults: new Set(faults) } : {}), ...(spec.signal ? { signal: spec.signal } : {}),
  };
  return {
    spec, on, p, env, base: { scenario: scenario.name, target, profile: p.name, seed }, knobs: spec.knobs ?? [], faults, realism,
    settings: { ...scenario.sim, ...(realism !== 'frozen' ? { realism } : {}) },
  };
}

/**
 * The scenario on a CPU the suite target prepares for it, judged, with every file of its run
 * directory but result.json written into `tmp`. Whatever ends it, the CPU is given back: after the
 * settle (TraceEn confirmed off, then freed, or leaked: docs/design.md "The invariant").
 */
async function traced(run: Run, tmp: string): Promise<ResultJson> {
  const cpu = await run.on.prepare({ profile: run.p, seed: run.spec.seed, knobs: run.knobs, settings: run.settings });
  let released = false;
  const release = async (): Promise<void> => {
    if (!released) { released = true; await cpu.release(); }
  };
  using guard = new RunGuard(cpu);
  const ctx = new ScenarioContext(run.env, guard.rec, cpu.model);
  // What preparing the CPU did (--reclaim) stands at the head of the run's transcript and in its figures.
  for (const n of cpu.notes ?? []) { guard.rec.note(0, n); ctx.figure('reclaimed', n); }
  const t: OnCpu = { ...run, cpu, guard, ctx, release, tmp };
  try {
    let failure = await sequence(t);
    await settle(t);
    let files: RunFiles | undefined;
    if (broken(t, failure) === undefined) {
      files = await writeFiles(t).catch((e: unknown) => {
        failure = targetFailure(e);
        if (broken(t, failure) === undefined) throw e;
        return undefined;
      });
    }
    const why = broken(t, failure);
    return why !== undefined ? await errorRun(t, why) : await judgedRun(t, files);
  } finally {
    // A dead target cannot free anything; its runs are reported as errors instead.
    await release().catch((e: unknown) => { if (run.on.lost?.() === undefined) throw e; });
  }
}

/** Runs the scenario: a throw is an expectation that failed; returns the target's failure when it was one. */
async function sequence({ spec, ctx }: OnCpu): Promise<string | undefined> {
  try {
    await spec.scenario.run(ctx);
    return undefined;
  } catch (e) {
    const failure = targetFailure(e);
    ctx.expect('the sequence ran to its end', false, `${(e as Error).name}: ${(e as Error).message}`);
    return failure;
  }
}

/**
 * Whatever ended the run, what it still holds goes back under the invariant (docs/design.md
 * "The invariant"): tracing confirmed off, then freed, or left allocated and reported.
 */
async function settle({ guard, ctx }: OnCpu): Promise<void> {
  if ((await guard.settle()).length) ctx.figure('leakedBytes', guard.leakedBytes);
  // What the model still holds, when it holds anything (the crash-point sweep reads these).
  const held = guard.modelAfter();
  if (held?.tracing.length) ctx.figure('modelTraceEnAfter', held.tracing.join(','));
  if (held?.allocated) ctx.figure('modelAllocatedAfter', held.allocated);
}

/** A target that died or stopped answering judges nothing: why the run is an error, or undefined. */
function broken({ on }: OnCpu, failure: string | undefined): string | undefined {
  const lost = on.lost?.();
  return lost !== undefined ? `the target died: ${lost}` : failure !== undefined ? `the target failed: ${failure}` : undefined;
}

/** What result.json and the flow check take from the files written. */
interface RunFiles {
  readonly libipt: NonNullable<ResultJson['libipt']>;
  /** truth.jsonl's bytes, where a model ran the run. */
  readonly truth?: Uint8Array;
}

/** The run's files but result.json, taken from the CPU, which is then released, and written into `tmp`. */
async function writeFiles(t: OnCpu): Promise<RunFiles> {
  const { artifacts, truth } = await artifactsOf(t.ctx, t.guard.rec, t.cpu, t.p);
  await t.release();
  await writeArtifacts(t.tmp, artifacts);
  const im = artifacts.imageJson;
  return { libipt: libiptCommands(im.cpu, im.timing, BigInt(im.base)), ...(truth ? { truth } : {}) };
}

/** An error run: its transcript up to the failure (the evidence) and its result. */
async function errorRun(t: OnCpu, why: string): Promise<ResultJson> {
  await t.release().catch(() => undefined);
  await writeFile(join(t.tmp, RUN_FILES.transcript), t.guard.rec.jsonl());
  return t.guard.judge(errorResult(t.base, why, t.ctx));
}

/** A run that ran to its end: the flow check on the files written, the run's figures, the verdict. */
async function judgedRun(t: OnCpu, files: RunFiles | undefined): Promise<ResultJson> {
  const { ctx, guard, cpu, knobs, faults, realism } = t;
  if (ctx.flowCheck) {
    const c = await compareFlowWithTruth(t.tmp, ctx.flowCheck.mode, files?.truth);
    ctx.expect(ctx.flowCheck.name, c.ok, c.detail);
  }
  ctx.figure('transcriptLines', guard.rec.lines.length);
  ctx.figure('roundTrips', guard.rec.roundTrips);
  // The PMI skid the model ran with, from the options the run's model is built with (knobs included).
  if (cpu.model) ctx.figure('simPmiSkid', runModelOptions(t.p, t.spec.seed, knobs, t.settings).topa?.pmiSkid ?? null);
  if (t.spec.target !== 'sim') ctx.figure('targetDescription', cpu.description);
  if (knobs.length) ctx.figure('knobs', knobs.join(','));
  if (realism !== 'frozen') ctx.figure('realism', realism);
  if (faults.length) ctx.figure('driverFaults', faults.join(','));
  const libipt = files?.libipt;
  return guard.judge({ ...t.base, ...verdictOf(ctx.expectations), expectations: ctx.expectations, figures: ctx.figures, ...(libipt ? { libipt } : {}) });
}

/**
 * The run directory's files from a finished scenario run (truth.jsonl only where a model ran it),
 * and truth.jsonl's bytes, which the flow check compares with (so the file is not read back).
 */
async function artifactsOf(ctx: ScenarioContext, rec: RecordingTarget, cpu: RunCpu, p: CpuProfile): Promise<{ artifacts: RunArtifacts; truth?: Uint8Array }> {
  const probed = ctx.probed ?? await probe(cpu.target, 0);
  const w = ctx.workloadUsed ?? ctx.workload();
  const { identity, timing } = await interopOf(cpu, ctx.request?.MTCFreq ?? null);
  const truth = cpu.model ? cpu.model.truthLog(0)?.jsonl(ctx.truthFilter) ?? new Uint8Array(0) : undefined;
  const artifacts: RunArtifacts = {
    transcript: rec.jsonl(),
    trace: ctx.result?.stream ?? new Uint8Array(0),
    // No driver trace (hand-programmed error scenarios): nothing was collected, and nothing is claimed.
    losses: ctx.result?.ledger ?? { collected: 0, lost: [] },
    image: w.image,
    imageJson: {
      base: hex(w.base), entry: hex(w.entry), bytes: w.image.length,
      cpuid14: leaf14(probed).map((c) => ({ subleaf: c.subleaf, eax: hex(c.regs.eax >>> 0), ebx: hex(c.regs.ebx >>> 0), ecx: hex(c.regs.ecx >>> 0), edx: hex(c.regs.edx >>> 0) })),
      profile: p.name, cpu: identity, timing, errata: [...probed.errata].sort(), probeWarnings: probed.warnings,
    },
    ...(truth ? { truth } : {}),
  };
  return { artifacts, ...(truth ? { truth } : {}) };
}

/** MSR_PLATFORM_INFO: bits 15:8 are the maximum non-turbo ratio. */
const MSR_PLATFORM_INFO = 0xce;

/**
 * The CPU's identity and the trace's timing parameters, read from the run's CPU (not recorded in the
 * transcript). The model has no MSR_PLATFORM_INFO: its ratio is its clock's (DEFAULT_CLOCK.p1).
 */
async function interopOf(cpu: RunCpu, mtcFreq: number | null): Promise<{ identity: CpuIdentity; timing: TraceTiming }> {
  const t = cpu.target;
  const l0 = await t.cpuid(0, 0), l1 = await t.cpuid(1, 0);
  const identity = identityOf(vendorOf(l0.ebx, l0.ecx, l0.edx), l1.eax);
  const l15 = (l0.eax >>> 0) >= 0x15 ? await t.cpuid(0x15, 0) : undefined;
  const cpuid15 = l15 && l15.eax !== 0 && l15.ebx !== 0 ? { eax: l15.eax >>> 0, ebx: l15.ebx >>> 0 } : null;
  const nomFreq = cpu.model ? DEFAULT_CLOCK.p1
    : await t.rdmsr(0, MSR_PLATFORM_INFO).then((v) => Number((v >> 8n) & 0xffn), () => null);
  return { identity, timing: { mtcFreq, nomFreq, cpuid15 } };
}
