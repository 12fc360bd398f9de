// The files of a run directory (docs/design.md "The run directory") read for the report without
// ever throwing: a file that is absent, unreadable or not what the contract says comes back as a
// FileProblem, so a damaged run shows "missing" or "malformed" in its section and the page is
// still written.
import type { LossLedger } from '../../../driver/collect/ledger.js';
import { VERDICTS, type CorruptRecord, type LeakRecord, type ResultJson } from '../../rundir/result.js';
import { readRunFile } from '../../rundir/read-run-file.js';
import { RUN_FILES, type RunFile } from '../../rundir/run-files.js';
import { readResultsIndexFile, RESULTS_FILE } from '../../rundir/results-index.js';
import type { Expectation, FileProblem, Figures } from './view-model.js';

/** A value read, or why it could not be. */
export type Read<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: FileProblem };

/** The text of `dir/file`; absent or unreadable is `missing`. */
export async function readText(dir: string, file: RunFile | typeof RESULTS_FILE): Promise<Read<string>> {
  try {
    return { ok: true, value: file === RESULTS_FILE ? await readResultsIndexFile(dir) : (await readRunFile(dir, file)).toString('utf8') };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { ok: false, problem: { file, problem: 'missing', detail: code === 'ENOENT' ? 'not in the run directory' : `cannot be read (${code ?? (e as Error).message})` } };
  }
}

/** JSON of `dir/file` checked by `check` (which names what is wrong, or returns undefined). */
async function readJson<T>(dir: string, file: RunFile, check: (v: Record<string, unknown>) => string | undefined): Promise<Read<T>> {
  const text = await readText(dir, file);
  if (!text.ok) return text;
  let v: unknown;
  try {
    v = JSON.parse(text.value);
  } catch (e) {
    return { ok: false, problem: { file, problem: 'malformed', detail: `not JSON: ${(e as Error).message}` } };
  }
  const why = v === null || typeof v !== 'object' || Array.isArray(v) ? 'not a JSON object' : check(v as Record<string, unknown>);
  return why === undefined ? { ok: true, value: v as T } : { ok: false, problem: { file, problem: 'malformed', detail: why } };
}

const isExpectation = (e: unknown): e is Expectation =>
  e !== null && typeof e === 'object' && typeof (e as Expectation).name === 'string' && typeof (e as Expectation).ok === 'boolean' && typeof (e as Expectation).detail === 'string';
const isCorruptRecord = (e: unknown): e is CorruptRecord => {
  const c = e as CorruptRecord;
  return e !== null && typeof e === 'object' && typeof c.kind === 'string' && Number.isSafeInteger(c.cpu) && typeof c.addr === 'string' &&
    Number.isSafeInteger(c.length) && typeof c.detail === 'string';
};
const isLeakRecord = (e: unknown): e is LeakRecord => {
  const l = e as LeakRecord;
  return e !== null && typeof e === 'object' && typeof l.base === 'string' && Number.isSafeInteger(l.size) && typeof l.role === 'string';
};
/** `v` is absent, or a list whose every item passes `is`. */
const optionalList = (v: unknown, is: (x: unknown) => boolean): boolean => v === undefined || (Array.isArray(v) && v.every(is));

/** result.json: the keys the report uses must have their documented types (docs/schemas/result.schema.json). */
export function resultProblem(j: Record<string, unknown>): string | undefined {
  if (typeof j.scenario !== 'string' || typeof j.target !== 'string' || typeof j.profile !== 'string') return 'scenario, target or profile is not a string';
  if (!Number.isSafeInteger(j.seed)) return 'seed is not an integer';
  if (!(VERDICTS as readonly unknown[]).includes(j.verdict)) return `verdict ${JSON.stringify(j.verdict)} is not one of ${VERDICTS.join(', ')}`;
  if (!Array.isArray(j.expectations) || !j.expectations.every(isExpectation)) return 'expectations is not a list of {name, ok, detail}';
  if (j.figures === null || typeof j.figures !== 'object' || Array.isArray(j.figures)) return 'figures is not an object';
  if (!optionalList(j.corrupt, isCorruptRecord)) return 'corrupt is not a list of {kind, cpu, addr, length, detail}';
  if (!optionalList(j.leaked, isLeakRecord)) return 'leaked is not a list of {base, size, role}';
  if (j.host !== undefined && typeof j.host !== 'string') return 'host is not a string';
  return undefined;
}

/** result.json, with an optional `host` (a merged multi-host suite may carry one). */
export type ResultWithHost = ResultJson & { readonly host?: string; readonly figures: Figures };

/** result.json of `dir`. */
export function readResult(dir: string): Promise<Read<ResultWithHost>> {
  return readJson<ResultWithHost>(dir, RUN_FILES.result, resultProblem);
}

const isCount = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;

/** losses.json of `dir` (docs/schemas/losses.schema.json). */
export function readLosses(dir: string): Promise<Read<LossLedger>> {
  return readJson<LossLedger>(dir, RUN_FILES.losses, (j) => {
    if (!isCount(j.collected)) return 'collected is not a byte count';
    for (const k of ['written', 'dropped'] as const) if (j[k] !== undefined && !isCount(j[k])) return `${k} is not a byte count`;
    const lossOk = (l: unknown): boolean => l !== null && typeof l === 'object' && isCount((l as { at: unknown }).at) &&
      ((l as { bytes: unknown }).bytes === null || isCount((l as { bytes: unknown }).bytes)) && typeof (l as { reason: unknown }).reason === 'string';
    return Array.isArray(j.lost) && j.lost.every(lossOk) ? undefined : 'lost is not a list of {at, bytes, reason}';
  });
}
