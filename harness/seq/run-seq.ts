// One sequence file on a target, written as a run directory (docs/design.md "The run directory"):
// result.json (one expectation per checked step, named by its file:line), transcript.jsonl (the
// RecordingTarget the scenarios use), trace.pt when a step collected output. Staged and renamed into
// place whole, like a scenario's. The target is a suite target of `ptlab run` (the sim: a fresh
// model per sequence; qemu: one guest, a fresh model per sequence with --pt model; ssh: one
// connection), prepared for each sequence as for each scenario run.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verdictOf, type ResultJson } from '../rundir/result.js';
import { RunGuard } from '../runner/run-guard.js';
import { commit, discard, stage } from '../rundir/stage.js';
import { RUN_FILES } from '../rundir/run-files.js';
import { writeVerdict } from '../rundir/write-run.js';
import { SimSuiteTarget, type SuiteTarget } from '../runner/suite-target.js';
import { getProfile, type ProfileName } from '../sim/profiles.js';
import { checkSequence } from './check.js';
import { runSequence } from './exec.js';
import type { Sequence } from './model.js';
import { readSeqFile } from './parse.js';
import { SIM_RULES, type SeqTargetRules } from './target-rules.js';

/** The profile of a sequence that names none and is run without --cpu. */
export const DEFAULT_SEQ_PROFILE: ProfileName = 'skylake';

/** Reads and checks every file for the target `rules` describes before anything runs; throws SeqFileError at the first mistake. */
export async function loadSequences(files: readonly string[], rules: SeqTargetRules = SIM_RULES): Promise<Sequence[]> {
  const out: Sequence[] = [];
  for (const f of files) out.push(checkSequence(await readSeqFile(f), rules));
  return out;
}

/** How to run a sequence: --cpu and --seed override the file's `cpu:` and `seed:`; `suite` is the target (default: the sim). */
export interface SeqRunOptions {
  readonly cpu?: ProfileName;
  readonly seed?: number;
  readonly suite?: SuiteTarget;
}

/**
 * Runs `seq` on a CPU of `o.suite` fresh for it and writes its run directory at `dir`; returns
 * result.json's content. On a real PT unit (`suite.probed`) the profile is the CPU's own: the
 * file's `cpu:` does not apply.
 */
export async function runSequenceToDir(seq: Sequence, dir: string, o: SeqRunOptions = {}): Promise<ResultJson> {
  const suite = o.suite ?? new SimSuiteTarget();
  const profile = suite.probed ?? getProfile(o.cpu ?? seq.cpu ?? DEFAULT_SEQ_PROFILE);
  const seed = o.seed ?? seq.seed ?? 1;
  const tmp = await stage(dir);
  try {
    const cpu = await suite.prepare({ profile, seed, knobs: [], settings: {} });
    // Custody and the memory oracle, as for a scenario run (harness/runner/run-guard.ts).
    using guard = new RunGuard(cpu);
    const target = guard.rec;
    let outcome;
    try {
      const model = cpu.model;
      try {
        outcome = await runSequence(seq, target, seed, model ? { truth: () => model.truth(0) } : {});
      } finally {
        await guard.settle();
      }
    } finally {
      await cpu.release();
    }
    await writeFile(join(tmp, RUN_FILES.transcript), target.jsonl());
    if (outcome.trace !== undefined) await writeFile(join(tmp, RUN_FILES.trace), outcome.trace);
    const ex = outcome.expectations;
    const v = verdictOf(ex);
    const r = guard.judge({
      scenario: `seq:${seq.name}`, target: suite.kind, profile: profile.name, seed,
      ...(v.verdict === 'fail' && ex.length === 0 ? { verdict: 'fail', reason: 'the sequence checked nothing: give a step an expect' } : v),
      expectations: ex,
      figures: {
        file: seq.file, steps: seq.steps.length, pmis: outcome.pmis, transcriptLines: target.lines.length, traceBytes: outcome.trace?.length ?? 0,
        ...(suite.kind === 'sim' ? {} : { targetDescription: cpu.description }),
        ...(guard.leakedBytes ? { leakedBytes: guard.leakedBytes } : {}),
      },
    });
    await writeVerdict(tmp, r);
    await commit(tmp, dir);
    return r;
  } catch (e) {
    await discard(tmp);
    throw e;
  }
}
