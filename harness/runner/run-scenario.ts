// Runs one scenario on one target/profile/seed (issue 4 item 8–10): wraps the
// target in RecordingTarget, runs the sequence, writes the artifacts, checks
// `ptlab flow` against truth.jsonl on the exported files, decides the verdict
// and commits the run directory in one rename.
import { hex } from '../../driver/target.js';
import { leaf14 } from '../../driver/probe.js';
import { probe } from '../../driver/probe.js';
import type { KnobName } from '../sim/knobs/knobs.js';
import { capsOf, getProfile, type ProfileName } from '../sim/profiles.js';
import { ScenarioContext } from '../scenarios/context.js';
import type { Scenario, ScenarioEnv, TargetKind } from '../scenarios/scenario.js';
import { verdictOf, type ResultJson } from '../report/result.js';
import { commit, discard, stage, writeArtifacts, writeVerdict, type RunArtifacts } from '../report/run-dir.js';
import { compareFlowWithTruth } from './flow-check.js';
import { createSim, SIM_DEFAULTS } from './targets.js';

/** One run to make. */
export interface RunSpec {
  readonly scenario: Scenario;
  readonly target: TargetKind;
  readonly profile: ProfileName;
  readonly seed: number;
  /** Model knobs (negative controls). */
  readonly knobs?: readonly KnobName[];
}

/** Runs `spec` and writes its run directory at `dir`; returns result.json's content. */
export async function runScenario(spec: RunSpec, dir: string): Promise<ResultJson> {
  const { scenario, target, profile, seed } = spec;
  const knobs = spec.knobs ?? [];
  const p = getProfile(profile);
  const env: ScenarioEnv = { target, profile: p, caps: capsOf(p), seed };
  const base = { scenario: scenario.name, target, profile, seed };
  const tmp = await stage(dir);
  try {
    const skip = !scenario.targets.includes(target) ? `does not run on the ${target} target` : scenario.skip(env);
    if (skip !== undefined) {
      const r: ResultJson = { ...base, ...verdictOf([], skip), expectations: [], figures: {} };
      await writeVerdict(tmp, r);
      await commit(tmp, dir);
      return r;
    }
    const { sim, target: rec } = await createSim(profile, seed, knobs, scenario.sim ?? {});
    const ctx = new ScenarioContext(env, rec, sim);
    try {
      await scenario.run(ctx);
    } catch (e) {
      ctx.expect('the sequence ran to its end', false, `${(e as Error).name}: ${(e as Error).message}`);
    }
    const probed = ctx.probed ?? await probe(sim, 0);
    const w = ctx.workloadUsed ?? ctx.workload();
    const artifacts: RunArtifacts = {
      transcript: rec.jsonl(),
      trace: ctx.result?.stream ?? new Uint8Array(0),
      // No driver trace (hand-programmed error scenarios): nothing was collected, and nothing is claimed.
      losses: ctx.result?.ledger ?? { collected: 0, lost: [] },
      image: w.image,
      imageJson: {
        base: hex(w.base), entry: hex(w.entry), bytes: w.image.length,
        cpuid14: leaf14(probed).map((c) => ({ subleaf: c.subleaf, eax: hex(c.regs.eax >>> 0), ebx: hex(c.regs.ebx >>> 0), ecx: hex(c.regs.ecx >>> 0), edx: hex(c.regs.edx >>> 0) })),
        profile,
      },
      truth: sim.truth(0).map((l) => `${l}\n`).join(''),
    };
    await sim[Symbol.asyncDispose]();
    await writeArtifacts(tmp, artifacts);
    if (ctx.flowCheck) {
      const c = await compareFlowWithTruth(tmp, ctx.flowCheck.mode);
      ctx.expect(ctx.flowCheck.name, c.ok, c.detail);
    }
    ctx.figure('transcriptLines', rec.lines.length);
    ctx.figure('roundTrips', rec.roundTrips);
    ctx.figure('simPmiSkid', knobs.includes('huge-pmi-skid') ? 65536 : scenario.sim?.pmiSkid ?? SIM_DEFAULTS.pmiSkid);
    if (knobs.length) ctx.figure('knobs', knobs.join(','));
    const r: ResultJson = { ...base, ...verdictOf(ctx.expectations), expectations: ctx.expectations, figures: ctx.figures };
    await writeVerdict(tmp, r);
    await commit(tmp, dir);
    return r;
  } catch (e) {
    await discard(tmp);
    throw e;
  }
}
