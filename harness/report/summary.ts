// The summary table `ptlab run` prints at the end: one row per run, then the totals.
import type { ResultJson } from './result.js';

/** One progress line, printed as a run finishes. */
export function progressLine(r: ResultJson, i: number, n: number, ms: number): string {
  const tag = r.verdict === 'pass' ? 'PASS' : r.verdict === 'fail' ? 'FAIL' : 'skip';
  const why = r.verdict === 'pass' ? '' : `  ${r.reason ?? ''}`;
  return `[${String(i).padStart(String(n).length)}/${n}] ${tag} ${r.scenario} (${r.target}:${r.profile}) ${ms} ms${why}`;
}

/** A fixed-width table: scenario × profile verdicts, and the counts. */
export function summaryTable(runs: readonly ResultJson[]): string {
  const profiles = [...new Set(runs.map((r) => `${r.target}:${r.profile}`))];
  const scenarios = [...new Set(runs.map((r) => r.scenario))];
  const cell = (s: string, p: string): string => {
    const r = runs.find((x) => x.scenario === s && `${x.target}:${x.profile}` === p);
    return r ? (r.verdict === 'pass' ? 'pass' : r.verdict === 'fail' ? 'FAIL' : 'skip') : '-';
  };
  const w0 = Math.max(8, ...scenarios.map((s) => s.length));
  const ws = profiles.map((p) => Math.max(4, p.length));
  const row = (first: string, cells: string[]) => [first.padEnd(w0), ...cells.map((c, i) => c.padEnd(ws[i]!))].join('  ').trimEnd();
  const lines = [row('scenario', profiles), row('-'.repeat(w0), ws.map((w) => '-'.repeat(w)))];
  for (const s of scenarios) lines.push(row(s, profiles.map((p) => cell(s, p))));
  const count = (v: string) => runs.filter((r) => r.verdict === v).length;
  lines.push('', `${runs.length} runs: ${count('pass')} passed, ${count('fail')} failed, ${count('skip')} skipped`);
  return `${lines.join('\n')}\n`;
}
