// A small real suite for the report's tests, made with the built CLI on the sim: topa-stop with the
// knob no-topa-stop-status fails on every multi-entry profile (and skips on broadwell), topa-grow
// passes, single-entry-topa fails on broadwell and skips elsewhere, pmi-top-half (a platform top
// half acknowledges the PMI before the driver's handler runs) passes.
import { execa } from 'execa';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseResultsIndex } from '../../harness/report/results-index.js';
import type { ResultJson } from '../../harness/report/result.js';

export const PTLAB = resolve(import.meta.dirname, '../../dist/harness/cli/ptlab.js');

/** The scenarios, and the failing run whose section the tests open. */
export const SUITE = {
  scenarios: ['topa-stop', 'topa-grow', 'single-entry-topa', 'pmi-top-half'],
  failing: { scenario: 'topa-stop', profile: 'skylake', id: 'run-topa-stop-sim-skylake' },
  skipped: { scenario: 'single-entry-topa', profile: 'skylake', id: 'run-single-entry-topa-sim-skylake' },
  passing: { scenario: 'topa-grow', profile: 'skylake', id: 'run-topa-grow-sim-skylake' },
  topHalf: { scenario: 'pmi-top-half', profile: 'skylake', id: 'run-pmi-top-half-sim-skylake' },
} as const;

/** Runs the suite into `out` (exit 1: it has failures by design); returns its results in order. */
export async function makeSuite(out: string): Promise<ResultJson[]> {
  const r = await execa('node', [PTLAB, 'run', ...SUITE.scenarios, '--cpu', 'all', '--knob', 'no-topa-stop-status', '--out', out], { reject: false });
  if (r.exitCode !== 1) throw new Error(`ptlab run exited ${r.exitCode} (want 1: failures by design)\n${r.stderr}`);
  return parseResultsIndex(await readFile(join(out, 'results.jsonl'), 'utf8')).map((t) => t.result);
}
