// The rules a set of shards must keep before `ptlab merge` joins them (docs/sharding.md "Merge
// rules"), checked in this order: one matrix (fingerprint) cut into one number of shards; each
// shard once; every shard there; each cell held (as a result or a run directory) by one shard
// only, the one the assignment gives it to; every run whose verdict keeps a directory has it. The first rule broken is a MergeError naming the shards.
import type { TimedResult } from '../rundir/results-index.js';
import { cellKey, cellsOf, type Cell, type MatrixDef } from '../runner/matrix.js';
import { shardOfCell } from '../runner/shard.js';
import { MergeError } from './errors.js';
import { shardName, type Shard } from './read-shard.js';

/** Shards that belong together, with every run of the matrix they made in the unsharded order. */
export interface ShardSet {
  readonly matrix: MatrixDef;
  readonly fingerprint: string;
  readonly count: number;
  readonly cells: number;
  /** The shards by index (shards[0] is shard 1). */
  readonly shards: readonly Shard[];
  /** Every run made, in the unsharded order, with the shard that holds it. */
  readonly runs: readonly { readonly run: TimedResult; readonly cell: Cell; readonly shard: Shard }[];
  /** Run directories found in a shard that are no cell of the matrix (not merged). */
  readonly strays: readonly string[];
}

/** The settings in which two matrices differ, for the message. */
function differences(a: Shard, b: Shard): string {
  const ma = a.json.matrix, mb = b.json.matrix;
  const keys = (Object.keys(ma) as (keyof MatrixDef)[]).filter((k) => JSON.stringify(ma[k]) !== JSON.stringify(mb[k]));
  const show = (x: unknown): string => { const t = JSON.stringify(x); return t.length > 60 ? `${t.slice(0, 57)}…` : t; };
  const all = [...(a.json.ptlab !== b.json.ptlab ? [`ptlab ${a.json.ptlab} vs ${b.json.ptlab}`] : []), ...keys.map((k) => `${k} ${show(ma[k])} vs ${show(mb[k])}`)];
  return all.length ? all.join('; ') : `fingerprint ${a.json.fingerprint} vs ${b.json.fingerprint}`;
}

/** The cell a run directory path stands for (`<scenario>/<profile>`, or `seed-<S>/<scenario>/<profile>` in a sweep). */
function keyOfRunDir(path: string, m: MatrixDef): string | undefined {
  const parts = path.split('/');
  if (m.sweep) {
    const seed = /^seed-(\d+)$/.exec(parts[0] ?? '');
    return parts.length === 3 && seed ? `${Number(seed[1])}/${parts[1]}/${parts[2]}` : undefined;
  }
  return parts.length === 2 ? `${m.seeds.from}/${parts[0]}/${parts[1]}` : undefined;
}

/**
 * Whether a run of `verdict` has a run directory (docs/design.md "Which files a run directory holds"):
 * every judged or skipped run, and in a sweep that keeps failed runs only those that failed or were
 * corrupt. An `error` may or may not (a run that failed while its CPU was prepared has none).
 */
function keepsDir(verdict: string, m: MatrixDef): boolean {
  if (verdict === 'fail' || verdict === 'corrupt') return true;
  return (verdict === 'pass' || verdict === 'skip') && (!m.sweep || m.keep === 'all');
}

/** Checks that `given` (in the order given) are the shards 1..n of one matrix; returns them joined. */
export function checkShards(given: readonly Shard[]): ShardSet {
  const first = given[0]!;
  for (const s of given) {
    if (s.json.fingerprint !== first.json.fingerprint) {
      throw new MergeError('different-matrix', [first.dir, s.dir], `${shardName(s)} was cut from another matrix than ${shardName(first)}: ${differences(first, s)}`);
    }
    if (s.json.of !== first.json.of) {
      throw new MergeError('different-matrix', [first.dir, s.dir], `${shardName(s)} was cut into ${s.json.of} shards, ${shardName(first)} into ${first.json.of}`);
    }
  }
  const count = first.json.of;
  const byIndex = new Map<number, Shard>();
  for (const s of given) {
    const twin = byIndex.get(s.json.shard);
    if (twin) throw new MergeError('duplicate-shard', [twin.dir, s.dir], `shard ${s.json.shard}/${count} is given twice: ${twin.dir} and ${s.dir}`);
    byIndex.set(s.json.shard, s);
  }
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !byIndex.has(i));
  if (missing.length) {
    const names = missing.map((i) => `${i}/${count}`);
    const what = missing.length > 1 ? `shards ${names.join(', ')} are` : `shard ${names[0]} is`;
    throw new MergeError('missing-shard', names, `${what} missing (given: ${given.map(shardName).join(', ')})`);
  }
  const shards = Array.from({ length: count }, (_, i) => byIndex.get(i + 1)!);
  const matrix = first.json.matrix;
  const cells = new Map(cellsOf(matrix).map((c) => [cellKey(c), c]));
  // Who holds each cell, by its results and by its run directories.
  const holders = new Map<string, Set<Shard>>();
  const hold = (key: string, s: Shard): void => { const h = holders.get(key) ?? new Set(); h.add(s); holders.set(key, h); };
  const runs: { run: TimedResult; cell: Cell; shard: Shard }[] = [];
  const strays: string[] = [];
  for (const s of shards) {
    const seen = new Set<string>();
    for (const run of s.runs) {
      const key = cellKey(run.result), cell = cells.get(key);
      if (cell === undefined) throw new MergeError('foreign-cell', [s.dir], `${shardName(s)} holds a run of ${key}, which is not a cell of its matrix`);
      if (seen.has(key)) throw new MergeError('duplicate-cell', [s.dir], `${shardName(s)} holds the run of ${key} twice in its results`);
      seen.add(key);
      hold(key, s);
      runs.push({ run, cell, shard: s });
    }
    const dirs = new Set<string>();
    for (const path of s.runDirs) {
      const key = keyOfRunDir(path, matrix);
      if (key === undefined || !cells.has(key)) strays.push(`${s.dir}/${path}`);
      else { hold(key, s); dirs.add(key); }
    }
    const lost = s.runs.find((r) => keepsDir(r.result.verdict, matrix) && !dirs.has(cellKey(r.result)));
    if (lost) {
      throw new MergeError('missing-run', [s.dir], `${shardName(s)} lists the ${lost.result.verdict} run of ${cellKey(lost.result)} in its results.jsonl, but its run directory is not there (deleted, or the shard was copied in part)`);
    }
  }
  for (const [key, h] of [...holders].sort(([a], [b]) => cells.get(a)!.index - cells.get(b)!.index)) {
    const [a, b] = [...h];
    if (b) throw new MergeError('duplicate-cell', [a!.dir, b.dir], `${shardName(a!)} and ${shardName(b)} both hold the cell ${key}`);
    const owner = shardOfCell(cells.get(key)!.index, count);
    if (a!.json.shard !== owner) throw new MergeError('foreign-cell', [a!.dir], `${shardName(a!)} holds the cell ${key}, which belongs to shard ${owner}/${count}`);
  }
  runs.sort((x, y) => x.cell.index - y.cell.index);
  return { matrix, fingerprint: first.json.fingerprint, count, cells: cells.size, shards, runs, strays };
}
