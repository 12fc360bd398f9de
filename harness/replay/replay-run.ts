// A run directory replayed on a suite target (docs/replay.md): its result.json names the scenario,
// profile and seed, its transcript.jsonl the operations. The target builds the CPU as a run of that
// scenario would (the scenario's model settings on a model), then the transcript is issued on it.
import { join } from 'node:path';
import { CustodyTarget } from '../../driver/custody.js';
import { describeLeaks } from '../../driver/teardown.js';
import { readRunFile } from '../rundir/read-run-file.js';
import { RUN_FILES, type RunFile } from '../rundir/run-files.js';
import { PtError } from '../../driver/base/errors.js';
import type { SuiteTarget } from '../runner/suite-target.js';
import { findScenario } from '../scenarios/index.js';
import type { SimSettings } from '../scenarios/kit/scenario.js';
import type { KnobName } from '../sim/knobs/knobs.js';
import { getProfile, type ProfileName } from '../sim/profiles.js';
import { parseTranscriptLine } from '../rundir/parse-transcript.js';
import { NotReplayableError } from './errors.js';
import { replayTranscript, type CpuidDifference, type Divergence } from './replay.js';
import { replaceFile } from '../report/owned-files.js';
import { NotARunDirError, readResultJson } from '../rundir/read-result.js';

export interface ReplayRunOptions {
  /** The profile of the replay's model (default: the recorded run's). */
  readonly profile?: ProfileName;
  /** Model knobs of the replay (default none, even when the recorded run had some). */
  readonly knobs?: readonly KnobName[];
  /** Where to write the replay's own transcript.jsonl and replay.json: a directory prepareOut accepted (new or empty). */
  readonly out?: string;
  /** Stops the replay between two operations (PtError 'aborted'). */
  readonly signal?: AbortSignal;
  /** Go on past CPUID results that differ (replay.ts ReplayOptions.pastCpuid). */
  readonly pastCpuid?: boolean;
}

/** replay.json: what `ptlab replay` found (docs/replay.md). */
export interface ReplayReport {
  readonly run: string;
  readonly scenario: string;
  /** The profile replayed on, and the recorded run's. */
  readonly profile: string;
  readonly recordedProfile: string;
  readonly seed: number;
  /** The target replayed on, e.g. "sim:skylake". */
  readonly target: string;
  readonly knobs: readonly KnobName[];
  readonly lines: number;
  readonly equalLines: number;
  readonly equal: boolean;
  readonly divergence?: Divergence;
  /** CPUID results that differed and were gone past (`--past-cpuid`); absent when none. */
  readonly cpuid?: readonly CpuidDifference[];
  /** The model's memory-oracle events during the replay (docs/design.md "The memory oracle"); absent when none. */
  readonly corrupt?: readonly string[];
  /** What the replay left allocated because tracing could not be confirmed off at its end; absent when nothing. */
  readonly leaked?: string;
}

interface RecordedResult { scenario?: unknown; profile?: unknown; seed?: unknown }

async function readRun(dir: string): Promise<{ result: RecordedResult; lines: Record<string, unknown>[] }> {
  const read = (f: RunFile): Promise<string> => readRunFile(dir, f).then((b) => b.toString('utf8'), (e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') throw new NotReplayableError(`${dir} has no ${f}: not a run directory, or its run recorded nothing`);
    throw e instanceof PtError ? new NotReplayableError(e.message) : e;
  });
  const result: RecordedResult = await readResultJson(dir).catch((e: unknown) => {
    throw e instanceof NotARunDirError ? new NotReplayableError(`${dir} has no ${RUN_FILES.result}: not a run directory, or its run recorded nothing`) : e;
  });
  const lines = (await read(RUN_FILES.transcript)).split('\n').filter((l) => l.trim().length > 0).map(parseTranscriptLine);
  return { result, lines };
}

/** The model settings a run of `scenario` had: its own; a sequence file's (`seq:…`) are the defaults. */
function settingsOf(scenario: string): SimSettings {
  return scenario.startsWith('seq:') ? {} : findScenario(scenario).sim ?? {};
}

/** Replays the run directory `dir` on `on`; throws NotReplayableError when it cannot be replayed at all. */
export async function replayRunDir(dir: string, on: SuiteTarget, o: ReplayRunOptions = {}): Promise<ReplayReport> {
  const { result, lines } = await readRun(dir);
  if (typeof result.scenario !== 'string' || typeof result.profile !== 'string' || typeof result.seed !== 'number') {
    throw new NotReplayableError(`${join(dir, RUN_FILES.result)} does not name its scenario, profile and seed`);
  }
  if (lines.length === 0) throw new NotReplayableError(`${join(dir, RUN_FILES.transcript)} is empty: the run made no operation (a skipped run?)`);
  const knobs = o.knobs ?? [];
  const profile = on.probed ?? getProfile(o.profile ?? result.profile);
  const cpu = await on.prepare({ profile, seed: result.seed, knobs, settings: settingsOf(result.scenario) });
  // Whatever stops the replay (a divergence, a signal), what it holds goes back under docs/design.md "The invariant".
  const custody = new CustodyTarget(cpu.target);
  let outcome, settled;
  try {
    try {
      outcome = await replayTranscript(lines, custody, { ...(o.signal ? { signal: o.signal } : {}), ...(o.pastCpuid ? { pastCpuid: true } : {}) });
    } finally {
      settled = await custody.settle();
    }
  } finally {
    await cpu.release();
  }
  const corrupt = cpu.model?.oracle.events.map((e) => `${e.kind} on CPU ${e.cpu}: ${e.detail}`) ?? [];
  const report: ReplayReport = {
    run: dir, scenario: result.scenario, profile: profile.name, recordedProfile: result.profile, seed: result.seed, target: cpu.description, knobs,
    lines: outcome.lines, equalLines: outcome.equalLines, equal: outcome.divergence === undefined,
    ...(outcome.divergence ? { divergence: outcome.divergence } : {}),
    ...(outcome.cpuid ? { cpuid: outcome.cpuid } : {}),
    ...(corrupt.length ? { corrupt } : {}),
    ...(settled.leaked.length ? { leaked: `${describeLeaks(settled.leaked)}: ${settled.why ?? ''}` } : {}),
  };
  if (o.out !== undefined) {
    // A new file each (prepareOut made sure the directory held nothing), never one written in place.
    await replaceFile(join(o.out, RUN_FILES.transcript), outcome.transcript, { check: true });
    await replaceFile(join(o.out, 'replay.json'), `${JSON.stringify(report, null, 2)}\n`, { check: true });
  }
  return report;
}
