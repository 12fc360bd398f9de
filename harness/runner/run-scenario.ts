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
import { RecordingTarget } from '../../driver/transcript.js';
import type { DriverFault } from '../../driver/faults.js';
import { HUGE_PMI_SKID, type KnobName } from '../sim/knobs/knobs.js';
import type { RealismMode } from '../sim/realism.js';
import { capsOf, getProfile, type CpuProfile, type ProfileName } from '../sim/profiles.js';
import { ScenarioContext } from '../scenarios/kit/context.js';
import type { Scenario, ScenarioEnv, TargetKind } from '../scenarios/kit/scenario.js';
import { errorResult, isBad, verdictOf, type ResultJson } from '../report/result.js';
import { RunGuard } from './run-guard.js';
import { commit, discard, RUN_FILES, stage, writeArtifacts, writeVerdict, type RunArtifacts } from '../report/run-dir.js';
import { identityOf, libiptCommands, vendorOf, type CpuIdentity, type TraceTiming } from '../report/interop.js';
import { DEFAULT_CLOCK } from '../sim/trace/clock.js';
import { compareFlowWithTruth } from './flow-check.js';
import { SimSuiteTarget, targetFailure, type RunCpu, type SuiteTarget } from './suite-target.js';
import { SIM_DEFAULTS } from './targets.js';

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
  const { scenario, target, seed } = spec;
  if (on.kind !== target) throw new PtError('bad_config', `run of ${scenario.name} is for the ${target} target, but the suite's target is ${on.kind}`);
  const knobs = spec.knobs ?? [];
  const p = typeof spec.profile === 'string' ? getProfile(spec.profile) : spec.profile;
  const faults = spec.driverFaults ?? [];
  const env: ScenarioEnv = {
    target, ptUnit: on.rules === 'sim' ? 'model' : 'hardware', profile: p, caps: capsOf(p), seed, ...(faults.length ? { driverFaults: new Set(faults) } : {}), ...(spec.signal ? { signal: spec.signal } : {}),
  };
  const base = { scenario: scenario.name, target, profile: p.name, seed };
  const tmp = await stage(dir);
  const finish = async (r: ResultJson): Promise<ResultJson> => {
    if (keep === 'failed' && !isBad(r.verdict)) await discard(tmp);
    else await commit(tmp, dir);
    return r;
  };
  try {
    // Where the model is the PT unit, the sim's applicability rules hold (suite-target.ts `rules`).
    const skip = !scenario.targets.includes(on.rules) ? `does not run on the ${target} target` : scenario.skip(env);
    if (skip !== undefined) {
      const r: ResultJson = { ...base, ...verdictOf([], skip), expectations: [], figures: {} };
      await writeVerdict(tmp, r);
      return await finish(r);
    }
    const realism = spec.realism ?? 'frozen';
    const cpu = await on.prepare({ profile: p, seed, knobs, settings: { ...scenario.sim, ...(realism !== 'frozen' ? { realism } : {}) } });
    let released = false;
    const release = async (): Promise<void> => {
      if (!released) { released = true; await cpu.release(); }
    };
    // The run's custody, recorder and memory oracle (run-guard.ts).
    using guard = new RunGuard(cpu);
    const rec = guard.rec;
    const ctx = new ScenarioContext(env, rec, cpu.model);
    const judged = (r: ResultJson): ResultJson => guard.judge(r);
    // What preparing the CPU did (--reclaim) stands at the head of the run's transcript and in its figures.
    for (const n of cpu.notes ?? []) { rec.note(0, n); ctx.figure('reclaimed', n); }
    try {
      let failure: string | undefined;
      try {
        await scenario.run(ctx);
      } catch (e) {
        failure = targetFailure(e);
        ctx.expect('the sequence ran to its end', false, `${(e as Error).name}: ${(e as Error).message}`);
      }
      // Whatever ended the run, what it still holds goes back under the invariant (docs/design.md
      // "The invariant"): tracing confirmed off, then freed, or left allocated and reported.
      if ((await guard.settle()).length) ctx.figure('leakedBytes', guard.leakedBytes);
      // What the model still holds, when it holds anything (the crash-point sweep reads these).
      const held = guard.modelAfter();
      if (held?.tracing.length) ctx.figure('modelTraceEnAfter', held.tracing.join(','));
      if (held?.allocated) ctx.figure('modelAllocatedAfter', held.allocated);
      // A target that died or stopped answering judges nothing: the run is an error, with what it had.
      const broken = (): string | undefined => {
        const lost = on.lost?.();
        return lost !== undefined ? `the target died: ${lost}` : failure !== undefined ? `the target failed: ${failure}` : undefined;
      };
      let libipt: ResultJson['libipt'];
      let truth: Uint8Array | undefined;
      if (broken() === undefined) {
        try {
          const made = await artifactsOf(ctx, rec, cpu, p);
          const artifacts = made.artifacts;
          truth = made.truth;
          await release();
          await writeArtifacts(tmp, artifacts);
          const im = artifacts.imageJson;
          libipt = libiptCommands(im.cpu, im.timing, BigInt(im.base));
        } catch (e) {
          failure = targetFailure(e);
          if (broken() === undefined) throw e;
        }
      }
      const why = broken();
      if (why !== undefined) {
        await release().catch(() => undefined);
        await writeFile(join(tmp, RUN_FILES.transcript), rec.jsonl());
        const r = judged(errorResult(base, why, ctx));
        await writeVerdict(tmp, r);
        return await finish(r);
      }
      if (ctx.flowCheck) {
        const c = await compareFlowWithTruth(tmp, ctx.flowCheck.mode, truth);
        ctx.expect(ctx.flowCheck.name, c.ok, c.detail);
      }
      ctx.figure('transcriptLines', rec.lines.length);
      ctx.figure('roundTrips', rec.roundTrips);
      if (cpu.model) ctx.figure('simPmiSkid', knobs.includes('huge-pmi-skid') ? HUGE_PMI_SKID : scenario.sim?.pmiSkid ?? SIM_DEFAULTS.pmiSkid);
      if (target !== 'sim') ctx.figure('targetDescription', cpu.description);
      if (knobs.length) ctx.figure('knobs', knobs.join(','));
      if (realism !== 'frozen') ctx.figure('realism', realism);
      if (faults.length) ctx.figure('driverFaults', faults.join(','));
      const r = judged({ ...base, ...verdictOf(ctx.expectations), expectations: ctx.expectations, figures: ctx.figures, ...(libipt ? { libipt } : {}) });
      await writeVerdict(tmp, r);
      return await finish(r);
    } finally {
      // A dead target cannot free anything; its runs are reported as errors instead.
      await release().catch((e: unknown) => { if (on.lost?.() === undefined) throw e; });
    }
  } catch (e) {
    await discard(tmp);
    throw e;
  }
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
