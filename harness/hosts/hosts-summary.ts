// What `ptlab run --hosts` prints at the end (docs/hosts.md "On the console"): the scenario ×
// host:profile table of every run (report/summary.ts, with each run's target shown as its host),
// then one line per host with its counts and how its suite ended.
import type { ResultJson } from '../rundir/result.js';
import { summaryTable, verdictCounts } from '../report/summary.js';
import type { HostRun } from './run-hosts.js';

/** What a host is, as the table shows it: `ssh:lab1+model` or `ssh:lab1`. */
export function hostTarget(h: HostRun['host']): string {
  return `ssh:${h.name}${h.pt === 'model' ? '+model' : ''}`;
}

/** The runs of every host, each with its host name in place of its target (the table's columns are host:profile). */
export function runsByHost(runs: readonly HostRun[]): ResultJson[] {
  return runs.flatMap((h) => h.timed.map((t) => ({ ...t.result, target: h.host.name })));
}

/** The per-host lines: name, target, counts, and `complete`, `INCOMPLETE: why` or `UNAVAILABLE: why`. */
export function hostsTable(runs: readonly HostRun[]): string {
  const rows = runs.map((h) => {
    const c = verdictCounts(h.timed.map((t) => t.result));
    const status = h.status === 'complete' ? 'complete' : `${h.status.toUpperCase()}: ${h.reason ?? ''}`;
    return [h.host.name, hostTarget(h.host), String(c.runs), String(c.passed), String(c.failed), String(c.corrupt), String(c.skipped), String(c.errors), status];
  });
  const head = ['host', 'target', 'runs', 'passed', 'failed', 'corrupt', 'skipped', 'errors', 'status'];
  const widths = head.map((x, i) => Math.max(x.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: readonly string[]): string => r.map((x, i) => (i === r.length - 1 ? x : i >= 2 ? x.padStart(widths[i]!) : x.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(head), line(widths.map((w, i) => '-'.repeat(i === widths.length - 1 ? head[i]!.length : w))), ...rows.map(line)].join('\n');
}

/** The whole summary: the run table, then the host lines. */
export function hostsSummary(runs: readonly HostRun[]): string {
  return `${summaryTable(runsByHost(runs))}\n${hostsTable(runs)}\n`;
}
