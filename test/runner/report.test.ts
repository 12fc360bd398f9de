// result.json verdict rules, junit.xml escaping and the summary table.
import { describe, expect, test } from 'vitest';
import { junitXml, xmlEscape } from '../../harness/report/junit.js';
import { resultJsonText, verdictOf, type ResultJson } from '../../harness/report/result.js';
import { summaryTable } from '../../harness/report/summary.js';

const ok = { name: 'a', ok: true, detail: 'fine' };
const bad = { name: 'b', ok: false, detail: 'got 1, want 2' };
const run = (over: Partial<ResultJson>): ResultJson => ({ scenario: 's', target: 'sim', profile: 'skylake', seed: 1, verdict: 'pass', expectations: [ok], figures: {}, ...over });

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
});
