// The runs of a suite directory (docs/design.md "Where run directories go"): the lines of
// results.jsonl, in the suite's order, joined with the run directories found under the suite
// (`<scenario>/<profile>/`, `seed-<S>/<scenario>/<profile>/`, and `<host>/…` under `ptlab run
// --hosts`, whose results.jsonl names each run's host). A run directory results.jsonl does not
// list is shown after the listed ones; a listed run without a directory is in the matrix only.
import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parseResultsIndex, RESULTS_FILE } from '../../rundir/results-index.js';
import { RUN_FILES } from '../../rundir/run-files.js';
import { ReportError } from './errors.js';
import { readResult, readText } from './read-run-files.js';
import { keyOf, type RunSource } from './run-view.js';
import type { FileProblem, RunKey } from './view-model.js';

/** How deep run directories sit at most (host / seed-S / scenario / profile). */
const MAX_DEPTH = 4;
const RUN_FILE_NAMES = new Set<string>(Object.values(RUN_FILES));

/** A run to show: where it is, and where it sits in the matrix. */
export interface FoundRun extends RunSource {
  readonly key: RunKey;
}

/** The runs of `suite`, in order, and the suite files that could not be read. */
export async function findRuns(suite: string): Promise<{ runs: FoundRun[]; problems: FileProblem[] }> {
  const st = await stat(suite).catch(() => undefined);
  if (!st?.isDirectory()) throw new ReportError('not-a-suite', suite, `${suite} is not a directory: give the --out directory of ptlab run`);
  const problems: FileProblem[] = [];
  const indexed = await readIndex(suite, problems);
  const dirs = await runDirs(suite);
  if (indexed.length === 0 && dirs.length === 0 && !(await stat(join(suite, 'junit.xml')).catch(() => undefined))) {
    throw new ReportError('not-a-suite', suite, `${suite} holds no run directory, ${RESULTS_FILE} or junit.xml: give the --out directory of ptlab run`);
  }
  const byKey = new Map<string, FoundRun>();
  const runs: FoundRun[] = [];
  for (const i of indexed) {
    const run: FoundRun = { key: keyOf(i.result), indexed: i };
    runs.push(run);
    byKey.set(keyText(run.key), run);
  }
  const listedKeys = indexed.map((i) => keyOf(i.result));
  const hosts = new Set(listedKeys.flatMap((k) => (k.host === undefined ? [] : [k.host])));
  for (const abs of dirs) {
    const rel = relative(suite, abs);
    const key = await dirKey(abs, rel, listedKeys, hosts);
    const listed = byKey.get(keyText(key));
    if (listed && listed.dir === undefined) {
      const joined = { ...listed, dir: { abs, rel } };
      runs[runs.indexOf(listed)] = joined;
      byKey.set(keyText(key), joined);
    } else {
      runs.push({ key, dir: { abs, rel } });
    }
  }
  return { runs, problems };
}

const keyText = (k: RunKey): string => JSON.stringify([k.host ?? null, k.scenario, k.target, k.profile, k.seed]);

/** results.jsonl, line by line: a bad line is a problem of the suite, the others are kept. */
async function readIndex(suite: string, problems: FileProblem[]): Promise<NonNullable<RunSource['indexed']>[]> {
  const text = await readText(suite, RESULTS_FILE);
  if (!text.ok) {
    problems.push(text.problem);
    return [];
  }
  const out: NonNullable<RunSource['indexed']>[] = [];
  const bad: number[] = [];
  for (const [i, line] of text.value.split('\n').entries()) {
    if (line.trim() === '') continue;
    try {
      out.push(...parseResultsIndex(line));
    } catch {
      bad.push(i + 1);
    }
  }
  if (bad.length > 0) problems.push({ file: RESULTS_FILE, problem: 'malformed', detail: `${bad.length} line(s) are not results (the first is line ${bad[0]})` });
  return out;
}

/** Directories under `suite` that hold a file of the run-directory contract; hidden (staging) directories are left out. */
async function runDirs(suite: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    if (depth > 0 && entries.some((e) => e.isFile() && RUN_FILE_NAMES.has(e.name))) {
      found.push(dir);
      return;
    }
    if (depth === MAX_DEPTH) return;
    for (const e of entries.filter((x) => x.isDirectory() && !x.name.startsWith('.')).sort((a, b) => a.name.localeCompare(b.name))) {
      await walk(join(dir, e.name), depth + 1);
    }
  };
  await walk(suite, 0);
  return found;
}

/**
 * A run directory's key: its result.json, else its path (`…/<scenario>/<profile>`, `seed-<S>`)
 * matched against the index. Under `ptlab run --hosts`, a host's runs sit in `<host>/…` and their
 * result.json names no host: the first path segment does, when the index names that host.
 */
async function dirKey(abs: string, rel: string, listed: readonly RunKey[], hosts: ReadonlySet<string>): Promise<RunKey> {
  const parts = rel.split(sep);
  const host = parts.length > 2 && hosts.has(parts[0]!) ? parts[0]! : undefined;
  const r = await readResult(abs);
  if (r.ok) {
    const key = keyOf(r.value);
    return key.host === undefined && host !== undefined ? { ...key, host } : key;
  }
  const profile = parts[parts.length - 1] ?? '?', scenario = parts[parts.length - 2] ?? '?';
  const seedPart = parts.find((p) => /^seed-\d+$/.test(p));
  const seed = seedPart === undefined ? undefined : Number(seedPart.slice(5));
  const match = listed.find((k) => k.host === host && k.scenario === scenario && k.profile === profile && (seed === undefined || k.seed === seed));
  return match ?? { scenario, target: '?', profile, seed: seed ?? 0, ...(host === undefined ? {} : { host }) };
}
