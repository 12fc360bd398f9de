// One run's view (docs/report.md "A run's section"): read from its run directory (result.json,
// transcript.jsonl, losses.json) and, for what the directory lacks, from the suite's results.jsonl
// line. Never throws: a missing or malformed file is listed in the section and the rest is shown.
import { controlsOf } from '../controls.js';
import { RUN_FILES } from '../../rundir/run-files.js';
import type { ResultJson } from '../../rundir/result.js';
import { failureExcerpt } from './excerpt.js';
import { pmiTimeline } from './pmi-timeline.js';
import { readLosses, readResult, readText, type ResultWithHost } from './read-run-files.js';
import { regionFill } from './region-fill.js';
import { topaLayout } from './topa-layout.js';
import { parseTranscript } from './transcript-lines.js';
import type { FileProblem, RunDetail, RunKey, RunSummary, RunView } from './view-model.js';

/** Where a run is: its directory (absolute, and relative to the suite) and its results.jsonl line. */
export interface RunSource {
  readonly dir?: { readonly abs: string; readonly rel: string };
  readonly indexed?: { readonly result: ResultJson & { readonly host?: string }; readonly ms: number };
}

/** The matrix coordinates of a result. */
export function keyOf(r: ResultJson & { readonly host?: string }): RunKey {
  return { scenario: r.scenario, target: r.target, profile: r.profile, seed: r.seed, ...(r.host === undefined ? {} : { host: r.host }) };
}

/**
 * What a run's section shows, made by the lane that just ran it (`ptlab run` hands these to the
 * report instead of reading every run directory again at the end). Undefined where the section has
 * none: a skipped run.
 */
export async function runSection(dir: string, result: ResultJson): Promise<RunDetail | undefined> {
  return result.verdict === 'skip' ? undefined : detailOf(dir, result, []);
}

/**
 * Builds the view of one run; `id` is the anchor of its section, `fallback` its key when result.json
 * cannot say (and its host). `made`: its section as runSection made it when the run ended, if it was.
 */
export async function runView(src: RunSource, id: string, fallback: RunKey, made?: RunDetail): Promise<RunView> {
  const problems: FileProblem[] = [];
  let result: ResultWithHost | undefined = src.indexed?.result;
  if (src.dir) {
    const r = await readResult(src.dir.abs);
    if (r.ok) result = r.value;
    else problems.push(r.problem);
  }
  // A host's result.json names no host (ptlab run --hosts): the host comes from where it was found.
  const host = result?.host ?? fallback.host;
  const controls = result ? controlsOf(result.figures) : [];
  const summary: RunSummary = {
    ...(result ? keyOf(result) : fallback), ...(host === undefined ? {} : { host }), id,
    verdict: result?.verdict ?? 'missing',
    ...(result?.reason === undefined ? {} : { reason: result.reason }),
    ...(src.dir ? { dir: src.dir.rel } : {}),
    ...(src.indexed ? { ms: src.indexed.ms } : {}),
    ...(controls.length ? { controls } : {}),
  };
  if (src.dir === undefined || summary.verdict === 'skip') return { summary };
  return { summary, detail: made !== undefined && problems.length === 0 ? made : await detailOf(src.dir.abs, result, problems) };
}

/** What the section shows, from the files of `dir`. */
async function detailOf(dir: string, result: ResultWithHost | undefined, problems: FileProblem[]): Promise<RunDetail> {
  const judged = result?.verdict === 'pass' || result?.verdict === 'fail';
  const text = await readText(dir, RUN_FILES.transcript);
  if (!text.ok) problems.push(text.problem);
  const t = parseTranscript(text.ok ? text.value : '');
  if (t.malformed > 0) {
    problems.push({ file: RUN_FILES.transcript, problem: 'malformed', detail: `${t.malformed} of ${t.total} lines are not transcript lines (the first is line ${t.firstMalformed})` });
  }
  const losses = await readLosses(dir);
  // An error run keeps only result.json and its transcript (docs/design.md "Which files a run directory holds"),
  // and so does a corrupt run that was also an error: only a pass or a fail must have losses.json.
  if (!losses.ok && (judged || losses.problem.problem === 'malformed')) problems.push(losses.problem);
  const { timeline, first } = pmiTimeline(t.lines);
  const fill = regionFill(t.lines);
  const excerpt = result ? failureExcerpt(t.lines, result.verdict, first) : undefined;
  return {
    problems,
    expectations: result?.expectations ?? [],
    ...(result?.corrupt === undefined ? {} : { corrupt: result.corrupt }),
    ...(result?.leaked === undefined ? {} : { leaked: result.leaked }),
    figures: result?.figures ?? {},
    ...(result?.libipt === undefined ? {} : { libipt: result.libipt }),
    transcriptLines: t.total,
    topa: topaLayout(t.lines),
    ...(fill ? { fill } : {}),
    pmi: timeline,
    ...(losses.ok ? { losses: losses.value } : {}),
    ...(excerpt ? { excerpt } : {}),
  };
}
