// results.jsonl (docs/design.md "The run directory"), the suite's index of results at the root of
// --out: one line per run made, in the order of the suite, with result.json's keys and the run's
// time in milliseconds (`ms`). It holds the runs that keep no directory (a sweep's passing runs)
// too, so `ptlab merge` rebuilds junit.xml and the summary from it (docs/sharding.md).
import { join } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import { readBoundedText } from '../files/read-input.js';
import { VERDICTS, type ResultJson, type Verdict } from './result.js';

/** A run's result and how long it took (milliseconds; 0 when not measured). */
export interface TimedResult {
  readonly result: ResultJson;
  readonly ms: number;
}

/** The file name, at the root of --out. */
export const RESULTS_FILE = 'results.jsonl';

/** The most bytes a results.jsonl holds (a sweep of a million runs writes about 200 MB): past it, it is not ptlab's. */
export const RESULTS_INDEX_MAX_BYTES = 512 << 20;

/** The results.jsonl of the suite or shard `dir`: a regular file within its bound; ENOENT as it is, PtError('bad_config') otherwise. */
export async function readResultsIndexFile(dir: string): Promise<string> {
  return readBoundedText(join(dir, RESULTS_FILE), RESULTS_INDEX_MAX_BYTES, `a ${RESULTS_FILE}`);
}

/** One line of results.jsonl: result.json's keys in their order, then `ms`. */
export function resultsLine({ result: r, ms }: TimedResult): string {
  return JSON.stringify({
    scenario: r.scenario, target: r.target, profile: r.profile, seed: r.seed, verdict: r.verdict,
    ...(r.reason === undefined ? {} : { reason: r.reason }), expectations: r.expectations, figures: r.figures,
    ...(r.corrupt === undefined ? {} : { corrupt: r.corrupt }), ...(r.leaked === undefined ? {} : { leaked: r.leaked }),
    ...(r.libipt === undefined ? {} : { libipt: r.libipt }), ms,
  });
}

/** results.jsonl text for `runs`, in order. */
export function resultsIndexText(runs: readonly TimedResult[]): string {
  return runs.map((t) => `${resultsLine(t)}\n`).join('');
}

/** `v` is absent, or a list of objects (result.json's `corrupt` and `leaked`). */
const listOrAbsent = (v: unknown): boolean => v === undefined || (Array.isArray(v) && v.every((x) => typeof x === 'object' && x !== null));

/** Parses results.jsonl text; throws PtError('bad_config') naming the first bad line (1-based). */
export function parseResultsIndex(text: string): TimedResult[] {
  const out: TimedResult[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line === '') continue;
    let j: Record<string, unknown>;
    try {
      j = JSON.parse(line) as Record<string, unknown>;
    } catch (e) {
      throw new PtError('bad_config', `line ${i + 1}: not JSON: ${(e as Error).message}`, { cause: e });
    }
    const ok = typeof j === 'object' && j !== null && typeof j.scenario === 'string' && typeof j.target === 'string' && typeof j.profile === 'string' &&
      Number.isSafeInteger(j.seed) && VERDICTS.includes(j.verdict as Verdict) && Array.isArray(j.expectations) &&
      typeof j.figures === 'object' && j.figures !== null && listOrAbsent(j.corrupt) && listOrAbsent(j.leaked) && typeof j.ms === 'number';
    if (!ok) throw new PtError('bad_config', `line ${i + 1}: not a result (scenario, target, profile, seed, verdict, expectations, figures, [corrupt, leaked,] ms)`);
    const { ms, ...result } = j;
    out.push({ result: result as unknown as ResultJson, ms: ms as number });
  }
  return out;
}
