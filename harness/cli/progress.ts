// The progress of `ptlab run` on stderr (docs/sharding.md "Progress"). On a terminal: one live
// line, redrawn in place after every run, with the runs done of the total, the failures (and
// corrupt runs, and errors) so far and the time left; the line of a failed, corrupt or errored
// run (and in a sweep, a seed's line) is kept above it. Not on a terminal (CI logs, pipes): plain
// lines, bounded whatever the suite's size — the first run, then one line each twentieth of the
// runs or every 30 s (whichever comes first), the last run, every failed, corrupt or errored run,
// and in a sweep a seed's line in place of the run's when the seed that ends is due.
import { isBad, type ResultJson } from '../rundir/result.js';
import { progressLine, runLabel } from '../report/summary.js';

/** Where progress goes: whole lines, and on a terminal the live line (`status`, '' clears it). */
export interface ProgressOut {
  line(s: string): void;
  status?(s: string): void;
}

/** Plain progress prints about this many count-driven lines per suite (one each twentieth of the runs). */
export const PLAIN_LINES = 20;
/** …and one at least this often (ms) while runs are slow. */
export const PLAIN_EVERY_MS = 30_000;

/** A suite's progress callback (runSuite's `progress`). */
export type SuiteProgress = (r: ResultJson, i: number, n: number, ms: number, seedDone: boolean) => void;

/** "12s", "3m05s", "1h02m". */
export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * Progress for a suite of n runs: `sweep` shows the seed of each run and a line per seed; `now`
 * is the clock of the 30 s rule (performance.now by default). The time left is the mean time of
 * the runs made so far times the runs left.
 */
export function suiteProgress(out: ProgressOut, opts: { sweep: boolean; now?: () => number }): SuiteProgress {
  const now = opts.now ?? (() => performance.now());
  const { sweep } = opts;
  let failed = 0, corrupt = 0, errors = 0, runMs = 0, lastLine = now(), sinceLine = 0;
  let seedRuns = 0, seedFailed = 0, seedCorrupt = 0, seedMs = 0;
  /** ", N corrupt" when there is any: a corrupt run is counted apart from the failed ones. */
  const corruptText = (k: number): string => (k ? `, ${k} corrupt` : '');
  return (r, i, n, ms, seedDone) => {
    runMs += ms; sinceLine++; seedRuns++; seedMs += ms;
    if (r.verdict === 'fail') { failed++; seedFailed++; }
    if (r.verdict === 'corrupt') { corrupt++; seedCorrupt++; }
    if (r.verdict === 'error') errors++;
    const left = i < n ? `, ETA ${duration((runMs / i) * (n - i))}` : '';
    const errs = errors ? `, ${errors} error${errors === 1 ? '' : 's'}` : '';
    const status = `[${String(i).padStart(String(n).length)}/${n}, ${failed} failed${corruptText(corrupt)}${errs}${left}] ${runLabel(r, ms, sweep)}`;
    const timeDue = now() - lastLine >= PLAIN_EVERY_MS;
    const due = sinceLine >= Math.max(1, Math.ceil(n / PLAIN_LINES)) || timeDue || i === n;
    const kept: string[] = [];
    // Taking a CPU back from another tracer is never silent (--reclaim: harness/runner/claim.ts).
    if (typeof r.figures.reclaimed === 'string') kept.push(`ptlab run: ${r.figures.reclaimed}`);
    if (isBad(r.verdict)) kept.push(progressLine(r, i, n, ms, sweep));
    const seedLine = sweep && seedDone && due;
    if (seedLine) {
      kept.push(`seed ${r.seed}: ${seedRuns} runs, ${seedFailed} failed${corruptText(seedCorrupt)}, ${(seedMs / 1000).toFixed(1)} s ` +
        `(${i}/${n} runs made, ${failed} failed${corruptText(corrupt)} so far${left})`);
    }
    if (seedDone) { seedRuns = 0; seedFailed = 0; seedCorrupt = 0; seedMs = 0; }
    if (out.status) {
      if (kept.length) out.status('');
      for (const l of kept) out.line(l);
      out.status(status);
    } else {
      // In a sweep the seed's line stands for the count rule; a run's line comes first, on time, or last.
      const runLine = kept.length === 0 && (i === 1 || (sweep ? timeDue || (i === n && !seedLine) : due));
      if (runLine) kept.push(status);
      for (const l of kept) out.line(l);
    }
    if (kept.length) { lastLine = now(); sinceLine = 0; }
  };
}
