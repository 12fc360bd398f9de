// The summary table `ptlab run` prints at the end: one row per run, then the totals.
import { controlsLine, suiteControls } from './controls.js';
import { isFailure, VERDICTS, type ResultJson, type Verdict } from '../rundir/result.js';

/** How a verdict shows in progress lines and tables (the ones that need a look in capitals). */
const TAG: Readonly<Record<Verdict, string>> = { pass: 'PASS', fail: 'FAIL', corrupt: 'CORRUPT', skip: 'skip', error: 'ERROR' };

/** The name of each verdict's count in `ptlab run --json` and the hosts' lines. */
const COUNT_NAME = { pass: 'passed', fail: 'failed', corrupt: 'corrupt', skip: 'skipped', error: 'errors' } as const satisfies Record<Verdict, string>;

/** The runs, then how many had each verdict (in VERDICTS order): `ptlab run --json`'s `counts`. */
export type VerdictCounts = { runs: number } & Record<(typeof COUNT_NAME)[Verdict], number>;

/** How many of `runs` had each verdict. */
export function verdictCounts(runs: readonly ResultJson[]): VerdictCounts {
  const out: Record<string, number> = { runs: runs.length };
  for (const v of VERDICTS) out[COUNT_NAME[v]] = runs.filter((r) => r.verdict === v).length;
  return out as VerdictCounts;
}

/** The totals line's counts: "a passed, b failed[, c corrupt], d skipped[, e errors (not judged)]". */
function counts(runs: readonly ResultJson[]): string {
  const c = verdictCounts(runs);
  return `${c.passed} passed, ${c.failed} failed${c.corrupt ? `, ${c.corrupt} corrupt` : ''}, ${c.skipped} skipped${c.errors ? `, ${c.errors} errors (not judged)` : ''}`;
}

/** A run the driver was judged on: passed, failed or corrupt (skips and errors judge nothing). */
const judged = (r: ResultJson): boolean => r.verdict === 'pass' || isFailure(r.verdict);

/** One progress line, printed as a run finishes (`withSeed`: in a sweep, the run's seed too). */
export function progressLine(r: ResultJson, i: number, n: number, ms: number, withSeed = false): string {
  return `[${String(i).padStart(String(n).length)}/${n}] ${runLabel(r, ms, withSeed)}`;
}

/** A run as progress shows it: "PASS topa-grow (sim:skylake) 41 ms", with the seed in a sweep and the reason when it did not pass. */
export function runLabel(r: ResultJson, ms: number, withSeed = false): string {
  const why = r.verdict === 'pass' ? '' : `  ${r.reason ?? ''}`;
  return `${TAG[r.verdict]} ${r.scenario} (${r.target}:${r.profile})${withSeed ? ` seed ${r.seed}` : ''} ${ms} ms${why}`;
}

/** A fixed-width table: scenario × profile verdicts, and the counts. */
export function summaryTable(runs: readonly ResultJson[]): string {
  const profiles = [...new Set(runs.map((r) => `${r.target}:${r.profile}`))];
  const scenarios = [...new Set(runs.map((r) => r.scenario))];
  const cell = (s: string, p: string): string => {
    const r = runs.find((x) => x.scenario === s && `${x.target}:${x.profile}` === p);
    return r ? (r.verdict === 'pass' ? 'pass' : TAG[r.verdict]) : '-';
  };
  const w0 = Math.max(8, ...scenarios.map((s) => s.length));
  const ws = profiles.map((p) => Math.max(4, p.length, ...scenarios.map((s) => cell(s, p).length)));
  const row = (first: string, cells: string[]) => [first.padEnd(w0), ...cells.map((c, i) => c.padEnd(ws[i]!))].join('  ').trimEnd();
  if (runs.length === 0) return '0 runs\n'; // no matrix to draw (a suite interrupted before its first run)
  const lines = [row('scenario', profiles), row('-'.repeat(w0), ws.map((w) => '-'.repeat(w)))];
  for (const s of scenarios) lines.push(row(s, profiles.map((p) => cell(s, p))));
  lines.push('', `${runs.length} runs: ${counts(runs)}`);
  const controls = controlsLine(suiteControls(runs));
  if (controls) lines.push(controls);
  return `${lines.join('\n')}\n`;
}

/** Failures (fail and corrupt) per 1,000 runs that were judged (skips and errors do not count), to one decimal. */
export function failuresPerThousand(runs: readonly ResultJson[]): string {
  const made = runs.filter(judged).length;
  const failed = runs.filter((r) => isFailure(r.verdict)).length;
  return made === 0 ? '0' : (Math.round((failed * 10_000) / made) / 10).toString();
}

/**
 * The table of a seed sweep: scenario × profile, each cell the failed runs (fail or corrupt) of
 * the seeds it ran ("0/200", "3/200"; "skip" where the scenario never applied), then the failing
 * seeds of each cell (a corrupt one marked so) and the totals with failures per 1,000 runs.
 */
export function sweepTable(runs: readonly ResultJson[]): string {
  const profiles = [...new Set(runs.map((r) => `${r.target}:${r.profile}`))];
  const scenarios = [...new Set(runs.map((r) => r.scenario))];
  const cells = new Map<string, { made: number; failedSeeds: string[] }>();
  for (const r of runs) {
    const key = `${r.scenario} ${r.target}:${r.profile}`;
    const c = cells.get(key) ?? { made: 0, failedSeeds: [] };
    if (judged(r)) c.made++;
    if (isFailure(r.verdict)) c.failedSeeds.push(r.verdict === 'corrupt' ? `${r.seed} (corrupt)` : String(r.seed));
    cells.set(key, c);
  }
  const text = (s: string, p: string): string => {
    const c = cells.get(`${s} ${p}`);
    return c === undefined ? '-' : c.made === 0 ? 'skip' : `${c.failedSeeds.length}/${c.made}`;
  };
  const w0 = Math.max(8, ...scenarios.map((s) => s.length));
  const ws = profiles.map((p) => Math.max(4, p.length, ...scenarios.map((s) => text(s, p).length)));
  const row = (first: string, cols: string[]) => [first.padEnd(w0), ...cols.map((c, i) => c.padEnd(ws[i]!))].join('  ').trimEnd();
  const lines = [row('failures', profiles), row('-'.repeat(w0), ws.map((w) => '-'.repeat(w)))];
  for (const s of scenarios) lines.push(row(s, profiles.map((p) => text(s, p))));
  const failing = [...cells].filter(([, c]) => c.failedSeeds.length > 0);
  if (failing.length) {
    lines.push('', 'failing seeds:');
    for (const [key, c] of failing) {
      const shown = c.failedSeeds.slice(0, 10).join(', ') + (c.failedSeeds.length > 10 ? ` (+${c.failedSeeds.length - 10} more)` : '');
      lines.push(`  ${key}: ${shown}`);
    }
  }
  const lo = runs.reduce((m, r) => Math.min(m, r.seed), Infinity), hi = runs.reduce((m, r) => Math.max(m, r.seed), -Infinity);
  lines.push('', `${runs.length} runs over seeds ${lo}-${hi}: ${counts(runs)}; ` +
    `${failuresPerThousand(runs)} failures per 1,000 runs`);
  const controls = controlsLine(suiteControls(runs));
  if (controls) lines.push(controls);
  return `${lines.join('\n')}\n`;
}
