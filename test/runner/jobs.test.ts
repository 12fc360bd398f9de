// `ptlab run --jobs N` (docs/parallel.md): cells run at once on worker threads
// (sim) write the same suite as `--jobs 1` — every run directory byte for byte apart from the
// timestamps in the transcript, results.jsonl and junit.xml in cell order — and a sweep, --fail-fast
// and bad values behave as in a serial run. Made with the real CLI (dist/, built by npm test).
import { execa } from 'execa';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { parseRunArgs } from '../../harness/cli/commands/run.js';
import { UsageError } from '../../harness/cli/args.js';
import { diffSuites } from '../../harness/diff/suite-diff.js';
import { tmpRoot } from '../scenarios/tmp.js';

const PTLAB = resolve(import.meta.dirname, '../../dist/harness/cli/ptlab.js');
const ptlab = (...args: string[]) => execa('node', [PTLAB, ...args], { reject: false });
const root = await tmpRoot('ptlab-jobs-');
const SCENARIOS = ['topa-grow', 'topa-stop', 'err-reserved-bit', 'xsaves-roundtrip', 'single-entry-topa', 'pmi-preservation', 'single-entry-other-context'];

async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) out.push(relative(dir, join(e.parentPath, e.name)));
  return out.sort();
}

/**
 * A file's content without what differs between any two runs by design: times (t_us, ms, junit's
 * time=…) and the host-clock measurements in figures and expectation details (trace-off windows in
 * µs). Verdicts, expectation names and outcomes, and the run order stay.
 */
async function timeless(path: string): Promise<string> {
  const text = await readFile(path, 'utf8');
  const verdicts = (r: { scenario: string; profile: string; seed: number; verdict: string; expectations?: { name: string; ok: boolean }[] }) =>
    JSON.stringify([r.scenario, r.profile, r.seed, r.verdict, (r.expectations ?? []).map((e) => [e.name, e.ok])]);
  if (path.endsWith('report.html')) return 'the report (it holds the time it was made)';
  if (path.endsWith('transcript.jsonl')) return text.replace(/"t_us":\d+,/g, '');
  if (path.endsWith('result.json')) return verdicts(JSON.parse(text) as Parameters<typeof verdicts>[0]);
  if (path.endsWith('results.jsonl')) return text.trim().split('\n').map((l) => verdicts(JSON.parse(l) as Parameters<typeof verdicts>[0])).join('\n');
  if (path.endsWith('junit.xml')) return text.replace(/time="[0-9.]+"/g, '').replace(/<system-out>[^<]*<\/system-out>/g, '');
  return text;
}

describe('--jobs 2 on the sim writes what --jobs 1 writes', () => {
  const serial = join(root, 'serial'), parallel = join(root, 'parallel');
  beforeAll(async () => {
    const [a, b] = await Promise.all([
      ptlab('run', ...SCENARIOS, '--cpu', 'all', '--out', serial),
      ptlab('run', ...SCENARIOS, '--cpu', 'all', '--jobs', '2', '--out', parallel),
    ]);
    expect([a.exitCode, b.exitCode], failures(a.stderr) + failures(b.stderr)).toEqual([0, 0]);
  }, 180_000);

  test('the same files: traces, truth, ledgers and images byte for byte; transcripts apart from t_us; the same verdicts in the same order', async () => {
    const names = await files(serial);
    expect(await files(parallel)).toEqual(names);
    expect(names.filter((n) => n.endsWith('trace.pt')).length).toBeGreaterThan(10);
    const differ: string[] = [];
    for (const n of names) if (await timeless(join(serial, n)) !== await timeless(join(parallel, n))) differ.push(n);
    expect(differ).toEqual([]);
  });

  test('ptlab diff --suite: equal', async () => {
    expect((await diffSuites(serial, parallel)).equal).toBe(true);
  });

  test('report.html, assembled from the sections the lanes made as runs ended, is the page ptlab report makes from the files', async () => {
    for (const dir of [serial, parallel]) expect(await reportFromFiles(dir)).toBe(await pageOf(join(dir, 'report.html')));
  }, 60_000);
});

/** The FAIL and ERROR progress lines of a run's stderr (each names the run and its first failed expectation), or all of it when it has none. */
function failures(stderr: string): string {
  const lines = stderr.split('\n').filter((l) => / (FAIL|ERROR) /.test(l));
  return lines.length ? lines.join('\n') : stderr;
}

/** A report page without the time and command it was written by. */
async function pageOf(path: string): Promise<string> {
  const html = await readFile(path, 'utf8');
  expect(html).toContain('id="run-');
  return html.replace(/written [^<·]* by ptlab \w+/, 'written');
}

/** The page `ptlab report` makes of `dir` from its files alone. */
async function reportFromFiles(dir: string): Promise<string> {
  const out = `${dir}-report.html`;
  const r = await ptlab('report', dir, '--out', out);
  expect(r.exitCode, r.stderr).toBe(0);
  return pageOf(out);
}

describe('--jobs in a sweep and with --fail-fast', () => {
  test('a two-seed sweep lists its runs in cell order, as the serial sweep does', async () => {
    const a = join(root, 'sweep1'), b = join(root, 'sweep2');
    const [ra, rb] = await Promise.all([
      ptlab('run', 'topa-grow', 'err-reserved-bit', 'xsaves-roundtrip', '--cpu', 'all', '--seeds', '1-2', '--out', a),
      ptlab('run', 'topa-grow', 'err-reserved-bit', 'xsaves-roundtrip', '--cpu', 'all', '--seeds', '1-2', '--jobs', '2', '--out', b),
    ]);
    expect([ra.exitCode, rb.exitCode], failures(ra.stderr) + failures(rb.stderr)).toEqual([0, 0]);
    expect(await timeless(join(b, 'results.jsonl'))).toBe(await timeless(join(a, 'results.jsonl')));
    expect(await timeless(join(b, 'junit.xml'))).toBe(await timeless(join(a, 'junit.xml')));
  }, 120_000);

  test('--fail-fast stops taking cells at the first failure: exit 1, fewer runs than cells', async () => {
    const out = join(root, 'failfast');
    const r = await ptlab('run', 'topa-stop', 'topa-grow', 'err-reserved-bit', '--cpu', 'all', '--knob', 'no-topa-stop-status', '--jobs', '2', '--fail-fast', '--json', '--out', out);
    const doc = JSON.parse(r.stdout) as { runs: { verdict: string }[] };
    expect(r.exitCode).toBe(1);
    expect(doc.runs.some((x) => x.verdict === 'fail')).toBe(true);
    expect(doc.runs.length).toBeLessThan(18);
    // The failed run's section (expectations, transcript excerpt) was made by its lane.
    expect(await reportFromFiles(out)).toBe(await pageOf(join(out, 'report.html')));
  }, 120_000);
});

describe('--jobs on the command line', () => {
  test('1..64: a plan with jobs (1 is the serial suite, no field)', () => {
    expect(parseRunArgs(['--all', '--jobs', '2']).jobs).toBe(2);
    expect(parseRunArgs(['--all', '--jobs', '1']).jobs).toBeUndefined();
  });

  test.for(['0', '65', 'x', '-1', '2.5', ''])('--jobs %j is a usage error', (v) => {
    expect(() => parseRunArgs(['--all', '--jobs', v])).toThrow(UsageError);
  });

  test('the CLI refuses a bad --jobs with exit 2 and writes nothing', async () => {
    const out = join(root, 'bad-jobs');
    const r = await ptlab('run', 'topa-grow', '--jobs', '0', '--out', out);
    expect([r.exitCode, r.stderr]).toEqual([2, expect.stringContaining('--jobs takes a whole number 1..64')]);
  });
});
