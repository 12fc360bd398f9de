// junit.xml (DESIGN.md "The run directory"): one testcase per expectation;
// a skipped scenario is one skipped testcase; CI tools read it.
import type { ResultJson } from './result.js';

/** XML attribute/text escaping. */
export function xmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!)
    // XML 1.0 forbids most control characters even escaped.
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '?');
}

/** The testcases of one run, without the XML prolog (so a suite can collect several). */
export function junitSuite(r: ResultJson): string {
  const suite = `${r.scenario}@${r.target}:${r.profile}`;
  const cls = `ptlab.${r.target}.${r.profile}.${r.scenario}`;
  const a = (s: string) => xmlEscape(s);
  if (r.verdict === 'skip') {
    return `  <testsuite name="${a(suite)}" tests="1" failures="0" skipped="1">\n` +
      `    <testcase classname="${a(cls)}" name="${a(r.scenario)}">\n      <skipped message="${a(r.reason ?? '')}"/>\n    </testcase>\n  </testsuite>\n`;
  }
  const failures = r.expectations.filter((e) => !e.ok).length;
  const cases = r.expectations.map((e) =>
    `    <testcase classname="${a(cls)}" name="${a(e.name)}">` +
    (e.ok ? `<system-out>${a(e.detail)}</system-out></testcase>\n` : `\n      <failure message="${a(e.detail)}"/>\n    </testcase>\n`));
  if (r.expectations.length === 0) cases.push(`    <testcase classname="${a(cls)}" name="expectations">\n      <failure message="${a(r.reason ?? 'no expectation')}"/>\n    </testcase>\n`);
  return `  <testsuite name="${a(suite)}" tests="${Math.max(1, r.expectations.length)}" failures="${Math.max(failures, r.verdict === 'fail' && failures === 0 ? 1 : 0)}" skipped="0">\n${cases.join('')}  </testsuite>\n`;
}

/** A complete junit.xml document for one or more runs. */
export function junitXml(runs: readonly ResultJson[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="ptlab">\n${runs.map(junitSuite).join('')}</testsuites>\n`;
}

/**
 * junit.xml of a seed sweep: one testsuite per (scenario, profile), one testcase per seed, failed
 * with the run's reason (thousands of runs; each failed run keeps its own directory).
 */
export function junitSweepXml(runs: readonly ResultJson[]): string {
  const a = (s: string) => xmlEscape(s);
  const groups = new Map<string, ResultJson[]>();
  for (const r of runs) {
    const key = `${r.scenario}@${r.target}:${r.profile}`;
    const g = groups.get(key);
    if (g) g.push(r); else groups.set(key, [r]);
  }
  const suites = [...groups].map(([name, rs]) => {
    const cls = `ptlab.${rs[0]!.target}.${rs[0]!.profile}.${rs[0]!.scenario}`;
    const cases = rs.map((r) => `    <testcase classname="${a(cls)}" name="seed ${r.seed}">` + (
      r.verdict === 'pass' ? '</testcase>\n'
        : `\n      <${r.verdict === 'skip' ? 'skipped' : 'failure'} message="${a(r.reason ?? '')}"/>\n    </testcase>\n`));
    const count = (v: string) => rs.filter((r) => r.verdict === v).length;
    return `  <testsuite name="${a(name)}" tests="${rs.length}" failures="${count('fail')}" skipped="${count('skip')}">\n${cases.join('')}  </testsuite>\n`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="ptlab sweep">\n${suites.join('')}</testsuites>\n`;
}
