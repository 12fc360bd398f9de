// A suite directory's view (docs/report.md): its runs in the suite's order, each with the anchor of
// its section, built a few runs at a time (READ_AHEAD: one run's files are read while another's
// transcript is parsed; a transcript can be megabytes, so only that many are held at once).
import { resolve } from 'node:path';
import { findRuns } from './find-runs.js';
import { runView } from './run-view.js';
import type { RunDetail, RunKey, RunView, SuiteView } from './view-model.js';

/** Runs read at once. */
const READ_AHEAD = 4;

/** Sections made as the runs ended (runSection), by the run directory's absolute path. */
export type MadeSections = ReadonlyMap<string, RunDetail>;

/**
 * Reads every run of `dir`; throws ReportError('not-a-suite') when `dir` is no suite directory.
 * A run in `made` has its section from there, not from its files.
 */
export async function suiteView(dir: string, made?: MadeSections): Promise<SuiteView> {
  const { runs: found, problems } = await findRuns(dir);
  const ids = anchorsOf(found.map((f) => f.key));
  const madeFor = (abs: string | undefined): RunDetail | undefined => (abs === undefined ? undefined : made?.get(resolve(abs)));
  const runs: RunView[] = new Array(found.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < found.length; i = next++) runs[i] = await runView(found[i]!, ids[i]!, found[i]!.key, madeFor(found[i]!.dir?.abs));
  };
  await Promise.all(Array.from({ length: Math.min(READ_AHEAD, found.length) }, worker));
  return { dir, runs, problems };
}

/**
 * The anchor of each run's section: `run-<scenario>-<target>-<profile>`, with the seed when the
 * suite has several and the host when it names one; unique (a repeat gets `-2`, `-3`, …).
 */
export function anchorsOf(keys: readonly RunKey[]): string[] {
  const seeds = new Set(keys.map((k) => k.seed)).size > 1;
  const used = new Map<string, number>();
  return keys.map((k) => {
    const parts = [k.host, k.scenario, k.target, k.profile, seeds ? `seed${k.seed}` : undefined].filter((p) => p !== undefined);
    const base = `run-${parts.join('-').replace(/[^A-Za-z0-9_.-]/g, '_')}`;
    const n = (used.get(base) ?? 0) + 1;
    used.set(base, n);
    return n === 1 ? base : `${base}-${n}`;
  });
}
