// The deferred expectation "ptlab flow on the exported files equals
// truth.jsonl" really reads the files: a damaged trace or truth fails it.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, expect, test } from 'vitest';
import { compareFlowWithTruth } from '../../harness/runner/flow-check.js';
import { runScenario } from '../../harness/runner/run-scenario.js';
import { findScenario } from '../../harness/scenarios/index.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot();
const dir = join(root, 'run');

beforeAll(async () => {
  await runScenario({ scenario: findScenario('ret-compression'), target: 'sim', profile: 'skylake', seed: 1 }, dir);
});

test('the exported files of a lossless run reproduce truth.jsonl', async () => {
  expect((await compareFlowWithTruth(dir)).ok).toBe(true);
});

test('a truth.jsonl with one line changed no longer matches', async () => {
  const copy = join(root, 'changed-truth');
  await cp(dir, copy, { recursive: true });
  const lines = (await readFile(join(copy, 'truth.jsonl'), 'utf8')).split('\n');
  lines[5] = '{"kind":"disable"}';
  await writeFile(join(copy, 'truth.jsonl'), lines.join('\n'));
  expect((await compareFlowWithTruth(copy)).detail).toMatch(/^line 6 differs/);
});

test('a trace.pt cut short no longer matches', async () => {
  const copy = join(root, 'cut-trace');
  await cp(dir, copy, { recursive: true });
  const t = await readFile(join(copy, 'trace.pt'));
  await writeFile(join(copy, 'trace.pt'), t.subarray(0, t.length >> 1));
  expect((await compareFlowWithTruth(copy)).ok).toBe(false);
});
