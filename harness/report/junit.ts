// The suite's junit.xml (docs/design.md "The run directory"), one file at the root of --out: one
// testsuite per run with one testcase per expectation (a skipped run: one skipped testcase; a
// corrupt run: one more testcase failed with type corrupt); a seed sweep has one testsuite per
// (scenario, profile) with one testcase per seed. Every
// testsuite carries tests, failures, errors, skipped and time, as the common Jenkins JUnit schema
// requires; every testcase carries its time. CI tools read it.
import { isFailure, type ResultJson, type Verdict } from '../rundir/result.js';
import type { TimedResult } from '../rundir/results-index.js';

/** XML attribute/text escaping. */
export function xmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!)
    // XML 1.0 forbids most control characters even escaped.
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '?');
}

const a = (s: string): string => xmlEscape(s);
/** A run given without its time counts 0 s. */
const timedOf = (x: TimedResult | ResultJson): TimedResult => ('result' in x ? x : { result: x, ms: 0 });
/** Milliseconds as the schema's seconds. */
export const secs = (ms: number): string => (ms / 1000).toFixed(3);

/** A testsuite's counts (the attributes the JUnit schema requires) and its time in ms. */
export interface Counts { tests: number; failures: number; errors: number; skipped: number; ms: number }

/** One `<testsuite>` of `cases` (testcase elements, each ending in a newline). */
export function suiteXml(name: string, c: Counts, cases: readonly string[]): string {
  return `  <testsuite name="${a(name)}" tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" skipped="${c.skipped}" time="${secs(c.ms)}">\n${cases.join('')}  </testsuite>\n`;
}

/**
 * The whole document: `<testsuites name>` summing the counts of `suites`. The Jenkins JUnit schema
 * has no `skipped` on `<testsuites>` (a report carrying it is rejected there): skips are counted
 * on each `<testsuite>` only.
 */
export function documentXml(name: string, suites: readonly { xml: string; counts: Counts }[]): string {
  const sum = (k: keyof Counts): number => suites.reduce((s, x) => s + x.counts[k], 0);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${a(name)}" tests="${sum('tests')}" failures="${sum('failures')}" errors="${sum('errors')}" time="${secs(sum('ms'))}">\n` +
    `${suites.map((s) => s.xml).join('')}</testsuites>\n`;
}

/**
 * The element a verdict puts in its testcase (with `message`), or '' for a pass: a corrupt run is
 * a `<failure type="corrupt">`, so CI counts it as failed and can still tell it apart.
 */
export function outcomeXml(verdict: Verdict, message: string): string {
  switch (verdict) {
    case 'pass': return '';
    case 'fail': return `<failure message="${a(message)}"/>`;
    case 'corrupt': return `<failure type="corrupt" message="${a(message)}"/>`;
    case 'skip': return `<skipped message="${a(message)}"/>`;
    case 'error': return `<error message="${a(message)}"/>`;
  }
}

/** How many of `verdicts` count as failures (fail, corrupt), errors and skips in a testsuite. */
export function outcomeCounts(verdicts: readonly Verdict[]): Pick<Counts, 'failures' | 'errors' | 'skipped'> {
  return { failures: verdicts.filter(isFailure).length, errors: verdicts.filter((v) => v === 'error').length, skipped: verdicts.filter((v) => v === 'skip').length };
}

/** The name of the testcase a corrupt run adds to its expectations' (docs/design.md "junit.xml (at the root of --out)"). */
export const CORRUPT_CASE = 'PT reached only memory the driver owns';

/** The testsuite of one run: a testcase per expectation (and a corrupt run's own), the run's time spread over them. */
function runSuite({ result: r, ms }: TimedResult): { xml: string; counts: Counts } {
  const suite = `${r.scenario}@${r.target}:${r.profile}`;
  const cls = `ptlab.${r.target}.${r.profile}.${r.scenario}`;
  if (r.verdict === 'skip' || r.verdict === 'error') {
    const counts = { tests: 1, ...outcomeCounts([r.verdict]), ms };
    return { counts, xml: suiteXml(suite, counts, [`    <testcase classname="${a(cls)}" name="${a(r.scenario)}" time="${secs(ms)}">\n      ${outcomeXml(r.verdict, r.reason ?? '')}\n    </testcase>\n`]) };
  }
  const corrupt = r.verdict === 'corrupt';
  const tests = Math.max(1, r.expectations.length + (corrupt ? 1 : 0));
  const each = secs(ms / tests);
  const cases = r.expectations.map((e) =>
    `    <testcase classname="${a(cls)}" name="${a(e.name)}" time="${each}">` +
    (e.ok ? `<system-out>${a(e.detail)}</system-out></testcase>\n` : `\n      <failure message="${a(e.detail)}"/>\n    </testcase>\n`));
  // Whatever the expectations said, PT reached memory the driver does not own: one more failed testcase says so.
  if (corrupt) cases.push(`    <testcase classname="${a(cls)}" name="${a(CORRUPT_CASE)}" time="${each}">\n      ${outcomeXml('corrupt', r.reason ?? '')}\n    </testcase>\n`);
  else if (r.expectations.length === 0) cases.push(`    <testcase classname="${a(cls)}" name="expectations" time="${each}">\n      <failure message="${a(r.reason ?? 'no expectation')}"/>\n    </testcase>\n`);
  const failed = r.expectations.filter((e) => !e.ok).length + (corrupt ? 1 : 0);
  const counts = { tests, failures: Math.max(failed, r.verdict === 'fail' && failed === 0 ? 1 : 0), errors: 0, skipped: 0, ms };
  return { counts, xml: suiteXml(suite, counts, cases) };
}

/**
 * The testsuite that marks a suite incomplete (interrupted, the target died, a write failed): one
 * error testcase with the reason, so CI sees that runs are missing.
 */
function incompleteSuite(reason: string): { xml: string; counts: Counts } {
  const counts = { tests: 1, failures: 0, errors: 1, skipped: 0, ms: 0 };
  return { counts, xml: suiteXml('ptlab.incomplete', counts, [`    <testcase classname="ptlab.incomplete" name="the suite ran to its end" time="0.000">\n      <error message="${a(reason)}"/>\n    </testcase>\n`]) };
}

/** A complete junit.xml document for one or more runs (a run without a time counts 0 s); `incomplete`: why runs are missing. */
export function junitXml(runs: readonly (TimedResult | ResultJson)[], incomplete?: string): string {
  return documentXml('ptlab', [...runs.map((x) => runSuite(timedOf(x))), ...(incomplete === undefined ? [] : [incompleteSuite(incomplete)])]);
}

/**
 * junit.xml of a seed sweep: one testsuite per (scenario, profile), one testcase per seed, failed
 * with the run's reason (thousands of runs; each failed run keeps its own directory).
 */
export function junitSweepXml(runs: readonly (TimedResult | ResultJson)[], incomplete?: string): string {
  const groups = new Map<string, TimedResult[]>();
  for (const x of runs) {
    const t = timedOf(x);
    const key = `${t.result.scenario}@${t.result.target}:${t.result.profile}`;
    const g = groups.get(key);
    if (g) g.push(t); else groups.set(key, [t]);
  }
  const suites = [...groups].map(([name, ts]) => {
    const r0 = ts[0]!.result;
    const cls = `ptlab.${r0.target}.${r0.profile}.${r0.scenario}`;
    const cases = ts.map(({ result: r, ms }) => `    <testcase classname="${a(cls)}" name="seed ${r.seed}" time="${secs(ms)}">` + (
      r.verdict === 'pass' ? '</testcase>\n' : `\n      ${outcomeXml(r.verdict, r.reason ?? '')}\n    </testcase>\n`));
    const counts = { tests: ts.length, ...outcomeCounts(ts.map((t) => t.result.verdict)), ms: ts.reduce((s, t) => s + t.ms, 0) };
    return { counts, xml: suiteXml(name, counts, cases) };
  });
  return documentXml('ptlab sweep', [...suites, ...(incomplete === undefined ? [] : [incompleteSuite(incomplete)])]);
}
