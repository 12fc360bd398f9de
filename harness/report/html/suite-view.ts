// A suite directory's view (docs/report.md): its runs in the suite's order, each with the anchor of
// its section, built a few runs at a time (READ_AHEAD: one run's files are read while another's
// transcript is parsed; a transcript can be megabytes, so only that many are held at once), on
// this thread and, for a suite with many runs to read, on section threads (one per spare core).
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { findRuns } from './find-runs.js';
import { runView } from './run-view.js';
import { SectionThread } from './section-thread.js';
import type { RunDetail, RunKey, RunView, SuiteView } from './view-model.js';

/** Runs read at once on the main thread, and on each section thread. */
const READ_AHEAD = 4;
const PER_THREAD = 2;
/** Runs to read from their files before threads are worth their start (about 0.1 s each). */
const THREADS_FROM = 24;
/** Section threads at most (besides the main thread). */
const MAX_THREADS = 3;

/** Sections made as the runs ended (runSection), by the run directory's absolute path. */
export type MadeSections = ReadonlyMap<string, RunDetail>;

/**
 * Reads every run of `dir`; throws ReportError('not-a-suite') when `dir` is no suite directory.
 * A run in `made` has its section from there, not from its files. `threads`: section threads to
 * use (default: one per spare core, up to MAX_THREADS, when THREADS_FROM runs or more are read).
 */
export async function suiteView(dir: string, made?: MadeSections, o: { readonly threads?: number } = {}): Promise<SuiteView> {
  const { runs: found, problems } = await findRuns(dir);
  const ids = anchorsOf(found.map((f) => f.key));
  const madeFor = (abs: string | undefined): RunDetail | undefined => (abs === undefined ? undefined : made?.get(resolve(abs)));
  // Runs whose section must be read from their files: worth threads when there are many.
  const toRead = found.filter((f) => f.dir !== undefined && madeFor(f.dir.abs) === undefined).length;
  const threads = SectionThread.open(o.threads ?? (toRead >= THREADS_FROM ? Math.min(MAX_THREADS, availableParallelism() - 1) : 0));
  const runs: RunView[] = new Array(found.length);
  let next = 0;
  const here = (i: number): Promise<RunView> => runView(found[i]!, ids[i]!, found[i]!.key, madeFor(found[i]!.dir?.abs));
  /** Takes runs until none is left; on a thread, a run it fails is built here instead. */
  const puller = async (thread?: SectionThread): Promise<void> => {
    for (let i = next++; i < found.length; i = next++) {
      const f = found[i]!;
      runs[i] = thread && f.dir !== undefined && madeFor(f.dir.abs) === undefined
        ? await thread.view({ src: f, id: ids[i]!, key: f.key }).catch(() => here(i))
        : await here(i);
    }
  };
  try {
    await Promise.all([
      ...Array.from({ length: Math.min(READ_AHEAD, found.length) }, () => puller()),
      ...threads.flatMap((t) => Array.from({ length: PER_THREAD }, () => puller(t))),
    ]);
  } finally {
    await Promise.all(threads.map((t) => t.close()));
  }
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
