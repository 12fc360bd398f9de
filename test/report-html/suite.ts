// A small real suite for the report's tests, made with the built CLI on the sim: topa-stop with the
// knob no-topa-stop-status fails on every multi-entry profile (and skips on broadwell), topa-grow
// passes, single-entry-topa fails on broadwell and skips elsewhere, pmi-top-half (a platform top
// half acknowledges the PMI before the driver's handler runs) passes.
import { execa } from 'execa';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseResultsIndex } from '../../harness/rundir/results-index.js';
import { resultJsonText, withCorruption, type CorruptRecord, type LeakRecord, type ResultJson } from '../../harness/rundir/result.js';

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

/** The memory oracle's event and the leaked buffer `corruptCopy` gives the failing run. */
export const CORRUPT: { readonly event: CorruptRecord; readonly leaked: LeakRecord; readonly line: number } = {
  event: { kind: 'trace-write', cpu: 0, addr: '0x7f000', length: 64, detail: 'output region 0x7f000+64 is not the driver\'s (freed while TraceEn=1)' },
  leaked: { base: '0x9000', size: 4096, role: 'ToPA table' },
  /** The transcript line (1-based) the corrupt line becomes: before the run's first PMI. */
  line: 20,
};

/**
 * A copy of the suite `from` at `to` in which the failing run is corrupt, as the runner writes one:
 * result.json through withCorruption with a leaked buffer, a `corrupt` transcript line at
 * CORRUPT.line, and its results.jsonl line to match.
 */
export async function corruptCopy(from: string, to: string): Promise<ResultJson> {
  await cp(from, to, { recursive: true });
  const dir = join(to, SUITE.failing.scenario, SUITE.failing.profile);
  const was = JSON.parse(await readFile(join(dir, 'result.json'), 'utf8')) as ResultJson;
  const r: ResultJson = { ...withCorruption(was, [CORRUPT.event]), leaked: [CORRUPT.leaked] };
  await writeFile(join(dir, 'result.json'), resultJsonText(r));
  const lines = (await readFile(join(dir, 'transcript.jsonl'), 'utf8')).split('\n');
  const e = CORRUPT.event;
  lines.splice(CORRUPT.line - 1, 0, JSON.stringify({ seq: CORRUPT.line - 1, t_us: 0, cpu: e.cpu, op: 'corrupt', value: e.kind, addr: e.addr, length: e.length, result: e.detail }));
  await writeFile(join(dir, 'transcript.jsonl'), lines.join('\n'));
  const index = (await readFile(join(to, 'results.jsonl'), 'utf8')).split('\n').map((l) => {
    if (l === '') return l;
    const j = JSON.parse(l) as ResultJson & { ms: number };
    return j.scenario === was.scenario && j.profile === was.profile ? JSON.stringify({ ...r, ms: j.ms }) : l;
  });
  await writeFile(join(to, 'results.jsonl'), index.join('\n'));
  return r;
}
