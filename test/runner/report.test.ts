// result.json verdict rules, junit.xml escaping, the summary table, the counts of `ptlab run
// --json`, and results.jsonl; a corrupt run (the memory oracle's verdict) through each of them.
import { describe, expect, test } from 'vitest';
import { CORRUPT_CASE, junitSweepXml, junitXml, xmlEscape } from '../../harness/report/junit.js';
import { parseResultsIndex, resultsIndexText } from '../../harness/rundir/results-index.js';
import { resultJsonText, verdictOf, type ResultJson } from '../../harness/rundir/result.js';
import { failuresPerThousand, summaryTable, sweepTable, verdictCounts } from '../../harness/report/summary.js';

const ok = { name: 'a', ok: true, detail: 'fine' };
const bad = { name: 'b', ok: false, detail: 'got 1, want 2' };
const run = (over: Partial<ResultJson>): ResultJson => ({ scenario: 's', target: 'sim', profile: 'skylake', seed: 1, verdict: 'pass', expectations: [ok], figures: {}, ...over });
const event = { kind: 'trace-write', cpu: 0, addr: '0x7000', length: 64, detail: 'output region 0x7000+64 was freed while TraceEn=1' };
/** A corrupt run whose expectations all held: the memory oracle alone fails it. */
const corrupt = (over: Partial<ResultJson> = {}): ResultJson =>
  run({ verdict: 'corrupt', reason: `PT reached memory the driver does not own (trace-write): ${event.detail}`, corrupt: [event], ...over });

describe('verdicts', () => {
  test('all expectations hold: pass', () => {
    expect(verdictOf([ok, ok])).toEqual({ verdict: 'pass' });
  });
  test('one expectation fails: fail, with that expectation as the reason', () => {
    expect(verdictOf([ok, bad])).toEqual({ verdict: 'fail', reason: 'b: got 1, want 2' });
  });
  test('no expectation at all is a fail, not a pass', () => {
    expect(verdictOf([]).verdict).toBe('fail');
  });
  test('a skip reason makes it a skip', () => {
    expect(verdictOf([], 'no single range')).toEqual({ verdict: 'skip', reason: 'no single range' });
  });
  test('result.json leaves out reason when there is none', () => {
    expect(Object.keys(JSON.parse(resultJsonText(run({}))) as object)).not.toContain('reason');
  });
});

describe('junit.xml', () => {
  test('escapes markup in names and details', () => {
    expect(xmlEscape(`<a & "b">'`)).toBe('&lt;a &amp; &quot;b&quot;&gt;&apos;');
  });
  test('a failed expectation is a testcase with a failure', () => {
    const xml = junitXml([run({ verdict: 'fail', expectations: [ok, bad] })]);
    expect([(xml.match(/<testcase /g) ?? []).length, (xml.match(/<failure /g) ?? []).length]).toEqual([2, 1]);
  });
  test('a skipped run is one skipped testcase', () => {
    const xml = junitXml([run({ verdict: 'skip', reason: 'why', expectations: [] })]);
    expect(xml).toContain('<skipped message="why"/>');
  });
  test('every testsuite has tests, failures, errors, skipped and time; every testcase its time; the root sums them', () => {
    const xml = junitXml([{ result: run({ verdict: 'fail', expectations: [ok, bad] }), ms: 1500 }, { result: run({ verdict: 'skip', reason: 'r', expectations: [] }), ms: 20 }]);
    const suites = xml.match(/<testsuite [^>]*>/g) ?? [];
    const cases = xml.match(/<testcase [^>]*>/g) ?? [];
    expect([suites, cases.every((c) => / time="\d+\.\d{3}"/.test(c)), cases.length, xml.match(/<testsuites [^>]*>/)?.[0]]).toEqual([
      ['<testsuite name="s@sim:skylake" tests="2" failures="1" errors="0" skipped="0" time="1.500">',
        '<testsuite name="s@sim:skylake" tests="1" failures="0" errors="0" skipped="1" time="0.020">'],
      true, 3,
      '<testsuites name="ptlab" tests="3" failures="1" errors="0" time="1.520">',
    ]);
  });
});

describe('junit.xml of a corrupt run', () => {
  test('a corrupt run whose expectations held is a failure of type corrupt, counted in failures', () => {
    const xml = junitXml([{ result: corrupt(), ms: 100 }]);
    expect([xml.match(/<testsuite [^>]*>/)?.[0], new RegExp(`name="${CORRUPT_CASE}" time="0.050">\\s*<failure type="corrupt" message="PT reached memory the driver does not own \\(trace-write\\)`).test(xml),
      xml.match(/<testsuites [^>]*>/)?.[0]]).toEqual([
      '<testsuite name="s@sim:skylake" tests="2" failures="1" errors="0" skipped="0" time="0.100">', true,
      '<testsuites name="ptlab" tests="2" failures="1" errors="0" time="0.100">',
    ]);
  });
  test('a corrupt seed of a sweep is a failure of type corrupt, counted in failures, never in errors', () => {
    const xml = junitSweepXml([run({ seed: 1 }), corrupt({ seed: 2 })]);
    expect([(xml.match(/<failure type="corrupt" /g) ?? []).length, xml.includes('tests="2" failures="1" errors="0" skipped="0"')]).toEqual([1, true]);
  });
});

describe('the summary table', () => {
  test('has a row per scenario, a column per profile, and the counts', () => {
    const t = summaryTable([run({}), run({ profile: 'full', verdict: 'fail' }), run({ scenario: 't', verdict: 'skip' })]);
    expect(t.split('\n').filter((l) => l.startsWith('s ') || l.startsWith('t ')).map((l) => l.split(/\s+/)))
      .toEqual([['s', 'pass', 'FAIL'], ['t', 'skip', '-']]);
  });
  test('ends with passed, failed and skipped counts', () => {
    expect(summaryTable([run({}), run({ profile: 'full', verdict: 'fail' })])).toContain('2 runs: 1 passed, 1 failed, 0 skipped');
  });
  test('a suite run with negative controls names them under the totals; one without says nothing of them', () => {
    const t = summaryTable([run({ verdict: 'fail', figures: { knobs: 'no-topa-stop-status', driverFaults: 'skip-unmask,double-ack' } }), run({ profile: 'full', verdict: 'fail' })]);
    expect(t.trimEnd().split('\n').at(-1)).toBe('negative controls: knob no-topa-stop-status, driver fault skip-unmask, driver fault double-ack: every judged run should FAIL; a pass is a bug the suite misses');
    expect(summaryTable([run({})])).not.toContain('negative controls');
    expect(sweepTable([run({ figures: { driverFaults: 'skip-unmask' } }), run({ seed: 2, figures: { driverFaults: 'skip-unmask' } })])).toContain('negative controls: driver fault skip-unmask:');
  });
  test('a corrupt run shows as CORRUPT, and the totals count it apart from the failed runs', () => {
    const t = summaryTable([run({}), run({ profile: 'full', verdict: 'fail' }), corrupt({ profile: 'icelake' })]);
    expect([t.split('\n').find((l) => l.startsWith('s '))?.split(/\s+/), t.includes('3 runs: 1 passed, 1 failed, 1 corrupt, 0 skipped')])
      .toEqual([['s', 'pass', 'FAIL', 'CORRUPT'], true]);
  });
});

describe('the counts of ptlab run --json', () => {
  test('one count per verdict in the order summaries list them, corrupt apart from failed', () => {
    const c = verdictCounts([run({}), run({ verdict: 'fail' }), corrupt(), corrupt(), run({ verdict: 'skip' }), run({ verdict: 'error' })]);
    expect([c, Object.keys(c)]).toEqual([{ runs: 6, passed: 1, failed: 1, corrupt: 2, skipped: 1, errors: 1 }, ['runs', 'passed', 'failed', 'corrupt', 'skipped', 'errors']]);
  });
});

describe('results.jsonl', () => {
  const leaked = [{ base: '0x9000', size: 4096, role: 'ToPA table' }];
  test('a result with corrupt and leaked reads back as it was written', () => {
    const timed = [{ result: corrupt({ leaked, libipt: { ptdump: 'ptdump trace.pt', ptxed: 'ptxed --pt trace.pt' } }), ms: 12 }, { result: run({ seed: 2 }), ms: 3 }];
    expect(parseResultsIndex(resultsIndexText(timed))).toEqual(timed);
  });
  test('corrupt and leaked come after figures and before libipt, as in result.json', () => {
    const line = resultsIndexText([{ result: corrupt({ leaked, libipt: { ptdump: 'ptdump x', ptxed: 'ptxed x' } }), ms: 1 }]);
    expect(Object.keys(JSON.parse(line) as object)).toEqual([
      ...Object.keys(JSON.parse(resultJsonText(corrupt({ leaked, libipt: { ptdump: 'ptdump x', ptxed: 'ptxed x' } }))) as object), 'ms',
    ]);
  });
  test('a line whose corrupt is not a list is refused', () => {
    const line = resultsIndexText([{ result: corrupt(), ms: 1 }]).replace(/"corrupt":\[[^\]]*\]/, '"corrupt":"yes"');
    expect(() => parseResultsIndex(line)).toThrow(/line 1: not a result/);
  });
});

describe('the sweep report', () => {
  const sweep = [
    run({ seed: 1 }), run({ seed: 2, verdict: 'fail', reason: 'b: got 1, want 2', expectations: [bad] }), run({ seed: 3 }),
    run({ seed: 1, profile: 'broadwell', verdict: 'skip', reason: 'no', expectations: [] }),
    run({ seed: 2, profile: 'broadwell', verdict: 'skip', reason: 'no', expectations: [] }),
    run({ seed: 3, profile: 'broadwell', verdict: 'skip', reason: 'no', expectations: [] }),
  ];
  test('one cell per scenario and profile: failed runs of the runs made, or skip', () => {
    const t = sweepTable(sweep);
    expect([/^s +1\/3 +skip$/m.test(t) || /^s +skip +1\/3$/m.test(t), t.includes('  s sim:skylake: 2')]).toEqual([true, true]);
  });
  test('the totals count failures per 1,000 runs made (skips left out)', () => {
    expect([failuresPerThousand(sweep), sweepTable(sweep).includes('6 runs over seeds 1-3: 2 passed, 1 failed, 3 skipped; 333.3 failures per 1,000 runs')]).toEqual(['333.3', true]);
  });
  test('no run made: 0 failures per 1,000', () => {
    expect(failuresPerThousand([])).toBe('0');
  });
  test('a corrupt seed counts as a failure of its cell and per 1,000 runs, is marked in the failing seeds, and counted apart in the totals', () => {
    const t = sweepTable([run({ seed: 1 }), run({ seed: 2, verdict: 'fail', reason: 'x' }), corrupt({ seed: 3 }), run({ seed: 4 })]);
    expect([/^s +2\/4$/m.test(t), t.includes('  s sim:skylake: 2, 3 (corrupt)'), t.includes('4 runs over seeds 1-4: 2 passed, 1 failed, 1 corrupt, 0 skipped; 500 failures per 1,000 runs')])
      .toEqual([true, true, true]);
  });
  test('the failing seeds of a cell are listed, the first ten and how many more', () => {
    const many = Array.from({ length: 13 }, (_, i) => run({ seed: i + 1, verdict: 'fail', reason: 'x' }));
    expect(sweepTable(many)).toContain('s sim:skylake: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 (+3 more)');
  });
  test('junit.xml of a sweep: one testsuite per scenario and profile, one testcase per seed', () => {
    const xml = junitSweepXml(sweep);
    expect([(xml.match(/<testsuite /g) ?? []).length, (xml.match(/<testcase /g) ?? []).length, (xml.match(/<failure /g) ?? []).length,
      (xml.match(/<skipped /g) ?? []).length, xml.includes('tests="3" failures="1" errors="0" skipped="0" time="0.000"')]).toEqual([2, 6, 1, 3, true]);
  });
});
