// Sharding a suite (`ptlab run --shard i/n`, docs/sharding.md): which cells a shard runs, and
// shard.json, the file at the root of a shard's --out that says which shard it is and which
// matrix it was cut from, so `ptlab merge` can refuse shards that do not belong together.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import { readBoundedText } from '../files/read-input.js';
import type { Cell, MatrixDef } from './matrix.js';
import { replaceFile } from '../report/owned-files.js';

/** Shard `index` of `count` (1 ≤ index ≤ count). */
export interface ShardSpec {
  readonly index: number;
  readonly count: number;
}

/**
 * The shard that runs the cell at `index` of the unsharded order (docs/sharding.md): cells are
 * dealt in blocks of n, block b rotated by b — cell k to shard ((k mod n) + ⌊k / n⌋) mod n + 1.
 * Each block gives every shard one cell, so shard sizes differ by at most one. Consecutive cells
 * are one scenario on its profiles, so a slow scenario's runs are spread over every shard (a
 * contiguous split would make one shard the slowest); the rotation keeps a profile from always
 * landing on the same shard when n divides the number of profiles (6 profiles, n = 2 or 3), which
 * plain round-robin did (full matrix, n = 2: 14.2 s against 20.5 s of CPU; rotated 19.1 s against 15.0 s).
 */
export function shardOfCell(index: number, count: number): number {
  return (((index % count) + Math.floor(index / count)) % count) + 1;
}

/** The cells of `cells` that shard `spec` runs, in their unsharded order. */
export function cellsOfShard<C extends Pick<Cell, 'index'>>(cells: readonly C[], spec: ShardSpec): C[] {
  return cells.filter((c) => shardOfCell(c.index, spec.count) === spec.index);
}

/** The file name, at the root of a shard's --out. */
export const SHARD_FILE = 'shard.json';
/** The most bytes a shard.json holds (it records the matrix, not the runs). */
export const SHARD_JSON_MAX_BYTES = 1 << 20;
/** The format tag of shard.json (a new tag if its meaning ever changes: /2 deals cells in rotated blocks, /1 plain round-robin). */
export const SHARD_FORMAT = 'ptlab-shard/2';

/** Where a shard is: still running (or killed), done (ran its cells, or stopped at --fail-fast), or incomplete. */
export type ShardStatus = 'running' | 'done' | 'incomplete';

/** shard.json, keys in this order. */
export interface ShardJson {
  readonly format: typeof SHARD_FORMAT;
  readonly shard: number;
  readonly of: number;
  readonly ptlab: string;
  readonly fingerprint: string;
  /** Cells of the whole matrix. */
  readonly cells: number;
  /** Cells of this shard. */
  readonly shardCells: number;
  readonly matrix: MatrixDef;
  readonly status: ShardStatus;
  /** Runs in the shard's results.jsonl (once it is not running). */
  readonly runs?: number;
  /** Why the shard stopped early (status incomplete). */
  readonly incomplete?: string;
}

/** shard.json text: 2-space-indented JSON, a trailing newline. */
export function shardJsonText(s: ShardJson): string {
  const ordered = {
    format: s.format, shard: s.shard, of: s.of, ptlab: s.ptlab, fingerprint: s.fingerprint, cells: s.cells, shardCells: s.shardCells,
    matrix: s.matrix, status: s.status, ...(s.runs === undefined ? {} : { runs: s.runs }), ...(s.incomplete === undefined ? {} : { incomplete: s.incomplete }),
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/** Writes `out/shard.json`. */
export async function writeShardJson(out: string, s: ShardJson): Promise<void> {
  await replaceFile(join(out, SHARD_FILE), shardJsonText(s));
}

const isInt = (x: unknown): x is number => Number.isSafeInteger(x);
const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string');

/** Parses shard.json text; throws PtError('bad_config') naming the first thing wrong. */
export function parseShardJson(text: string): ShardJson {
  let j: Record<string, unknown>;
  try {
    j = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new PtError('bad_config', `not JSON: ${(e as Error).message}`, { cause: e });
  }
  const bad = (what: string): never => { throw new PtError('bad_config', what); };
  if (typeof j !== 'object' || j === null) bad('not a JSON object');
  if (j.format !== SHARD_FORMAT) bad(`format is ${JSON.stringify(j.format)}, not "${SHARD_FORMAT}"`);
  if (!isInt(j.of) || j.of < 1 || !isInt(j.shard) || j.shard < 1 || j.shard > j.of) bad(`shard ${String(j.shard)} of ${String(j.of)} is not a shard i of n with 1 ≤ i ≤ n`);
  if (typeof j.ptlab !== 'string' || typeof j.fingerprint !== 'string') bad('ptlab and fingerprint must be strings');
  if (!isInt(j.cells) || !isInt(j.shardCells)) bad('cells and shardCells must be whole numbers');
  if (j.status !== 'running' && j.status !== 'done' && j.status !== 'incomplete') bad(`status ${JSON.stringify(j.status)} is not running, done or incomplete`);
  const m = j.matrix as Record<string, unknown> | undefined;
  const seeds = m?.seeds as Record<string, unknown> | undefined;
  if (typeof m !== 'object' || m === null || typeof m.target !== 'string' || typeof m.sweep !== 'boolean' || (m.keep !== 'all' && m.keep !== 'failed') ||
    !isInt(seeds?.from) || !isInt(seeds?.to) || !isStrings(m.scenarios) || !isStrings(m.profiles) || !isStrings(m.knobs) || !isStrings(m.driverFaults)) {
    bad('matrix must have target, sweep, keep, seeds {from, to}, scenarios, profiles, knobs and driverFaults');
  }
  return j as unknown as ShardJson;
}

/** shard.json of the directory `dir`; undefined when it has none. Throws PtError('bad_config') when it is not valid. */
export async function readShardJson(dir: string): Promise<ShardJson | undefined> {
  const text = await readBoundedText(join(dir, SHARD_FILE), SHARD_JSON_MAX_BYTES, `a ${SHARD_FILE}`)
    .catch((e: NodeJS.ErrnoException) => { if (e.code === 'ENOENT') return undefined; throw e; });
  return text === undefined ? undefined : parseShardJson(text);
}

/**
 * Removes the shard.json an earlier sharded run left in `out` (an unsharded run or a merge under
 * --force writes a whole suite there, which is no shard). A file of that name that is not ptlab's
 * shard.json is kept.
 */
export async function removeShardJson(out: string): Promise<void> {
  const ours = await readShardJson(out).then((s) => s !== undefined, () => false);
  if (ours) await rm(join(out, SHARD_FILE), { force: true });
}
