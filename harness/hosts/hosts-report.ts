// The files at the root of `ptlab run --hosts … --out OUT` (docs/hosts.md "What OUT holds"):
// OUT/junit.xml with one testsuite per host, named by the host, holding one testcase per run
// named `<host>/<scenario>@<target>:<profile>` (and the seed in a sweep), so CI shows every host
// apart; and OUT/results.jsonl, every host's results.jsonl lines with a leading `host` key. The
// expectations of each run stay in the host's own OUT/<host>/junit.xml.
import { documentXml, outcomeCounts, outcomeXml, secs, suiteXml, xmlEscape, type Counts } from '../report/junit.js';
import { resultsLine, type TimedResult } from '../rundir/results-index.js';

/** One host's part of the report: its runs, and why its suite did not run to its end. */
export interface HostRuns {
  readonly name: string;
  readonly timed: readonly TimedResult[];
  /** Set when the host was unavailable, died, or its suite stopped early. */
  readonly incomplete?: string;
}

const a = xmlEscape;

/** The testcase of one run of `host`. */
function caseXml(host: string, { result: r, ms }: TimedResult, sweep: boolean): string {
  const head = `    <testcase classname="${a(`ptlab.${host}.${r.target}.${r.profile}.${r.scenario}`)}" name="${a(`${host}/${r.scenario}@${r.target}:${r.profile}${sweep ? ` seed ${r.seed}` : ''}`)}" time="${secs(ms)}">`;
  return r.verdict === 'pass' ? `${head}<system-out>${a(`${r.expectations.length} expectation(s) held`)}</system-out></testcase>\n`
    : `${head}\n      ${outcomeXml(r.verdict, r.reason ?? '')}\n    </testcase>\n`;
}

/** OUT/junit.xml: a testsuite per host, in the order given; `sweep` names each case's seed. */
export function hostsJunitXml(hosts: readonly HostRuns[], sweep: boolean): string {
  return documentXml('ptlab hosts', hosts.map((h) => {
    const cases = h.timed.map((t) => caseXml(h.name, t, sweep));
    const extra = h.incomplete === undefined ? 0 : 1;
    // As ptlab.incomplete in a suite's junit.xml: CI sees that this host's suite did not run to its end.
    if (h.incomplete !== undefined) cases.push(`    <testcase classname="ptlab.${a(h.name)}.incomplete" name="${a(`${h.name}/the suite ran to its end`)}" time="0.000">\n      <error message="${a(h.incomplete)}"/>\n    </testcase>\n`);
    const c = outcomeCounts(h.timed.map((t) => t.result.verdict));
    const counts: Counts = { tests: h.timed.length + extra, ...c, errors: c.errors + extra, ms: h.timed.reduce((s, t) => s + t.ms, 0) };
    return { counts, xml: suiteXml(h.name, counts, cases) };
  }));
}

/** OUT/results.jsonl: each host's lines in its suite's order, hosts in the order given, `host` first. */
export function hostsIndexText(hosts: readonly HostRuns[]): string {
  return hosts.flatMap((h) => h.timed.map((t) => `{"host":${JSON.stringify(h.name)},${resultsLine(t).slice(1)}\n`)).join('');
}
