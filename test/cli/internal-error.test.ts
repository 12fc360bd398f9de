// Exit status 70 (docs/exit-codes.md): an error ptlab does not expect is a bug in ptlab, never a
// verdict. A real `ptlab run` process meets one (test/cli/fixtures/break-rename.mjs makes every
// fs.promises.rename throw a plain Error, so committing a run directory fails), serially and on
// worker threads: it exits 70, not 1, prints the stack of where it happened, and still writes
// junit.xml and results.jsonl with the suite incomplete, leaving no directory or staging behind.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { expect, test } from 'vitest';
import { EXIT } from '../../harness/cli/exit-codes.js';
import { tmpRoot } from '../scenarios/tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const BREAK = join(import.meta.dirname, 'fixtures', 'break-rename.mjs');
const root = await tmpRoot('ptlab-internal-');

test.for(['1', '2'])('--jobs %s: exit 70 with the stack; junit.xml marks the run ptlab failed in, the runs not made and the suite as errors', async (jobs) => {
  const out = join(root, `jobs${jobs}`);
  const r = await execa('node', ['--import', BREAK, CLI, 'run', 'topa-grow', 'topa-stop', 'err-reserved-bit', '--cpu', 'full', '--jobs', jobs, '--out', out], { reject: false, timeout: 60_000 });
  expect(r.exitCode, r.stderr).toBe(EXIT.internal);
  expect(r.stderr).toContain('ptlab: internal error: Error: injected: rename is broken');
  // The stack names where it happened, in the worker thread too: the run directory's commit.
  expect(r.stderr).toMatch(/at commit \(.*rundir[\\/]stage\.js/);
  expect((await readdir(out)).sort()).toEqual(['junit.xml', 'results.jsonl']);
  const results = (await readFile(join(out, 'results.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { scenario: string; verdict: string; reason?: string });
  expect(results.map((x) => x.scenario)).toEqual(['topa-grow', 'topa-stop', 'err-reserved-bit']);
  expect(results.every((x) => x.verdict === 'error')).toBe(true);
  // The run that met the error says so; with two lanes, the run on the other lane met it too.
  expect(results[0]!.reason).toBe('ptlab itself failed: injected: rename is broken');
  expect(results.at(-1)!.reason).toMatch(/^(not run: )?ptlab itself failed: injected: rename is broken$/);
  const junit = await readFile(join(out, 'junit.xml'), 'utf8');
  expect(junit).toContain('<testsuites name="ptlab" tests="4" failures="0" errors="4"');
  expect(junit).toContain('<testsuite name="ptlab.incomplete"');
  expect(existsSync(join(out, 'topa-grow'))).toBe(false);
});
