// `ptlab diff --suite A B`: two suite directories (from `ptlab run --out`) compared run by run,
// matched by their path under the suite (`<scenario>/<profile>/`, or `seed-<S>/<scenario>/<profile>/`
// from a sweep). The result is a scenario × profile matrix of equal / differ / missing.
import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import { RUN_FILES } from '../rundir/run-files.js';
import { diffRuns, type DiffOptions, type RunDiff } from './run-diff.js';

/** One run of the matrix: where it sits and how the two suites compare there. */
export interface SuiteCell {
  /** The run's path under the suite, e.g. `topa-grow/skylake`. */
  readonly path: string;
  readonly scenario: string;
  readonly profile: string;
  readonly status: 'equal' | 'differ' | 'only-a' | 'only-b';
  readonly diff?: RunDiff;
}

export interface SuiteDiff {
  readonly a: string;
  readonly b: string;
  readonly equal: boolean;
  readonly cells: readonly SuiteCell[];
}

/** Every run directory (one holding result.json) under `root`, as paths relative to it. */
async function runDirs(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    if (entries.some((e) => e.isFile() && e.name === RUN_FILES.result)) out.push(relative(root, dir).split(sep).join('/'));
    for (const e of entries) if (e.isDirectory()) await walk(join(dir, e.name));
  };
  if (!(await stat(root).catch(() => undefined))?.isDirectory()) throw new PtError('bad_config', `not a directory: ${root}`);
  await walk(root);
  if (out.includes('')) throw new PtError('bad_config', `${root} is a run directory, not a suite: compare two run directories without --suite`);
  return out.sort();
}

/** Compares the suites `a` and `b` run by run. */
export async function diffSuites(a: string, b: string, opts: DiffOptions = {}): Promise<SuiteDiff> {
  const ra = await runDirs(a), rb = await runDirs(b);
  if (ra.length === 0 || rb.length === 0) throw new PtError('bad_config', `no run directory (with ${RUN_FILES.result}) under ${ra.length === 0 ? a : b}: not a suite`);
  const inB = new Set(rb);
  const cells: SuiteCell[] = [];
  for (const path of [...new Set([...ra, ...rb])].sort()) {
    const parts = path.split('/');
    const where = { path, scenario: parts.slice(0, -1).join('/') || path, profile: parts[parts.length - 1] ?? '' };
    if (!inB.has(path)) { cells.push({ ...where, status: 'only-a' }); continue; }
    if (!ra.includes(path)) { cells.push({ ...where, status: 'only-b' }); continue; }
    const d = await diffRuns(join(a, path), join(b, path), opts);
    cells.push({ ...where, status: d.equal ? 'equal' : 'differ', diff: d });
  }
  return { a, b, equal: cells.every((c) => c.status === 'equal'), cells };
}

/** The matrix as text: one row per scenario (with its seed directory), one column per profile. */
export function suiteMatrix(d: SuiteDiff): string {
  const profiles = [...new Set(d.cells.map((c) => c.profile))].sort();
  const rows = [...new Set(d.cells.map((c) => c.scenario))].sort();
  const cell = (s: string, p: string): string => d.cells.find((c) => c.scenario === s && c.profile === p)?.status ?? '';
  const table = [['scenario', ...profiles], ...rows.map((s) => [s, ...profiles.map((p) => cell(s, p))])];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  const line = (r: string[]): string => r.map((x, i) => x.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(table[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...table.slice(1).map(line)].join('\n');
}
