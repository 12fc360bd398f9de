// junit.xml against the JUnit schema CI servers read (docs/schemas/junit.xsd: the Jenkins JUnit
// structure with tests, failures, errors, skipped and time required), validated by xmllint
// (Debian libxml2-utils, installed by .ci/run): a suite of passes, failures, corrupt runs, skips
// and target errors, an incomplete suite, and a seed sweep. A file without `errors` must not validate.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { junitSweepXml, junitXml } from '../../harness/report/junit.js';
import { errorResult, type ResultJson } from '../../harness/rundir/result.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot('ptlab-junit-');
const XSD = join(process.cwd(), 'docs', 'schemas', 'junit.xsd');

const base = { scenario: 'topa-grow', target: 'sim', profile: 'skylake', seed: 1 };
const RUNS: ResultJson[] = [
  { ...base, verdict: 'pass', expectations: [{ name: 'ledger balances', ok: true, detail: 'written 4096 = collected 4096 + lost 0' }], figures: {} },
  { ...base, profile: 'icelake', verdict: 'fail', reason: 'x: y', expectations: [{ name: 'a <check> & "quote"', ok: false, detail: 'got\u0001 1' }], figures: {} },
  { ...base, profile: 'broadwell', verdict: 'skip', reason: 'no multi-entry ToPA', expectations: [], figures: {} },
  errorResult({ ...base, profile: 'full' }, 'the target died: QEMU exited (killed by SIGKILL)'),
  {
    ...base, profile: 'tigerlake', verdict: 'corrupt', reason: 'PT reached memory the driver does not own (topa-read): <END> & "beyond"',
    expectations: [{ name: 'ledger balances', ok: true, detail: 'written 0 = collected 0 + lost 0' }], figures: {},
    corrupt: [{ kind: 'topa-read', cpu: 0, addr: '0x8000', length: 8, detail: 'END → 0x8000, a freed table' }],
  },
];

/** xmllint's verdict on `xml` against the schema. */
async function validate(name: string, xml: string): Promise<{ code: number; said: string }> {
  const file = join(root, name);
  writeFileSync(file, xml);
  const r = await execa('xmllint', ['--noout', '--schema', XSD, file], { reject: false });
  return { code: r.exitCode ?? -1, said: `${r.stdout}${r.stderr}` };
}

describe('junit.xml and the JUnit schema (xmllint)', () => {
  test.for([
    { what: 'a suite with a pass, a failure, a skip, a target error and a corrupt run', xml: () => junitXml(RUNS.map((result, i) => ({ result, ms: 10 * i }))) },
    { what: 'an incomplete suite', xml: () => junitXml(RUNS.slice(0, 1), 'interrupted after 1 of 240 runs') },
    { what: 'a seed sweep, incomplete', xml: () => junitSweepXml(RUNS.map((r, i) => ({ ...r, seed: i + 1, profile: 'skylake' })), 'the target died') },
    { what: 'an empty suite', xml: () => junitXml([]) },
  ])('$what validates', async ({ what, xml }) => {
    expect(await validate(`${what.replace(/\W+/g, '-')}.xml`, xml())).toEqual({ code: 0, said: expect.stringContaining('validates') as unknown as string });
  });

  test('a testsuite without errors does not validate (the schema can fail)', async () => {
    const xml = junitXml(RUNS.slice(0, 1)).replace(/ errors="\d+"/g, '');
    const r = await validate('no-errors.xml', xml);
    expect([r.code, /errors.*is required/.test(r.said)]).toEqual([3, true]);
  });

  test('skipped on <testsuites> does not validate: the Jenkins JUnit schema has no such attribute there', async () => {
    const xml = junitXml(RUNS.slice(0, 3)).replace('<testsuites name="ptlab"', '<testsuites name="ptlab" skipped="1"');
    const r = await validate('testsuites-skipped.xml', xml);
    expect([r.code, /skipped.*is not allowed/.test(r.said), /<testsuites [^>]*skipped=/.test(junitXml(RUNS.slice(0, 3)))]).toEqual([3, true, false]);
  });

  test('a corrupt run is a <failure type="corrupt">, counted in failures, never in errors', () => {
    const xml = junitXml([{ result: RUNS[4]!, ms: 5 }]);
    expect([/<failure type="corrupt" message="PT reached memory the driver does not own \(topa-read\): &lt;END&gt; &amp; &quot;beyond&quot;"\/>/.test(xml),
      /<testsuites [^>]*failures="1" errors="0"/.test(xml)]).toEqual([true, true]);
  });

  test('a target error is an <error>, counted in errors, never in failures', () => {
    const xml = junitXml([{ result: RUNS[3]!, ms: 5 }]);
    expect([/<error message="the target died/.test(xml), /<testsuites [^>]*failures="0" errors="1"/.test(xml)]).toEqual([true, true]);
  });
});
