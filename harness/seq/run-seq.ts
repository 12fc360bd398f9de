// One sequence file on the sim, written as a run directory (docs/design.md "The run directory"):
// result.json (one expectation per checked step, named by its file:line), transcript.jsonl (the
// RecordingTarget the scenarios use), trace.pt when a step collected output. Staged and renamed into
// place whole, like a scenario's.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verdictOf, type ResultJson } from '../report/result.js';
import { commit, discard, RUN_FILES, stage, writeVerdict } from '../report/run-dir.js';
import { createSim } from '../runner/targets.js';
import type { ProfileName } from '../sim/profiles.js';
import { checkSequence } from './check.js';
import { runSequence } from './exec.js';
import type { Sequence } from './model.js';
import { readSeqFile } from './parse.js';

/** The profile of a sequence that names none and is run without --cpu. */
export const DEFAULT_SEQ_PROFILE: ProfileName = 'skylake';

/** Reads and checks every file before anything runs; throws SeqFileError at the first mistake. */
export async function loadSequences(files: readonly string[]): Promise<Sequence[]> {
  const out: Sequence[] = [];
  for (const f of files) out.push(checkSequence(await readSeqFile(f)));
  return out;
}

/** How to run a sequence: --cpu and --seed override the file's `cpu:` and `seed:`. */
export interface SeqRunOptions {
  readonly cpu?: ProfileName;
  readonly seed?: number;
}

/** Runs `seq` on a fresh sim and writes its run directory at `dir`; returns result.json's content. */
export async function runSequenceToDir(seq: Sequence, dir: string, o: SeqRunOptions = {}): Promise<ResultJson> {
  const profile = o.cpu ?? seq.cpu ?? DEFAULT_SEQ_PROFILE;
  const seed = o.seed ?? seq.seed ?? 1;
  const tmp = await stage(dir);
  try {
    const { sim, target } = await createSim(profile, seed);
    let outcome;
    try {
      outcome = await runSequence(seq, target, seed);
    } finally {
      await sim[Symbol.asyncDispose]();
    }
    await writeFile(join(tmp, RUN_FILES.transcript), target.jsonl());
    if (outcome.trace !== undefined) await writeFile(join(tmp, RUN_FILES.trace), outcome.trace);
    const ex = outcome.expectations;
    const v = verdictOf(ex);
    const r: ResultJson = {
      scenario: `seq:${seq.name}`, target: 'sim', profile, seed,
      ...(v.verdict === 'fail' && ex.length === 0 ? { verdict: 'fail', reason: 'the sequence checked nothing: give a step an expect' } : v),
      expectations: ex,
      figures: { file: seq.file, steps: seq.steps.length, pmis: outcome.pmis, transcriptLines: target.lines.length, traceBytes: outcome.trace?.length ?? 0 },
    };
    await writeVerdict(tmp, r);
    await commit(tmp, dir);
    return r;
  } catch (e) {
    await discard(tmp);
    throw e;
  }
}
