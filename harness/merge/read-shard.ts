// One shard directory as `ptlab merge` reads it (docs/sharding.md): its shard.json, its index of
// results (results.jsonl) and the run directories it holds. A directory that is no finished shard
// is a MergeError naming it.
import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import { parseResultsIndex, readResultsIndexFile, RESULTS_FILE, type TimedResult } from '../rundir/results-index.js';
import { RUN_FILES } from '../rundir/run-files.js';
import { fingerprintOf } from '../runner/matrix.js';
import { readShardJson, SHARD_FILE, type ShardJson } from '../runner/shard.js';
import { MergeError } from './errors.js';

/** A finished shard. */
export interface Shard {
  readonly dir: string;
  readonly json: ShardJson;
  /** Its results.jsonl, in its order. */
  readonly runs: readonly TimedResult[];
  /** Its run directories (holding result.json), as `/`-separated paths under `dir`, sorted. */
  readonly runDirs: ReadonlySet<string>;
}

/** "shard 2/3 (DIR)". */
export function shardName(s: Pick<Shard, 'dir' | 'json'>): string {
  return `shard ${s.json.shard}/${s.json.of} (${s.dir})`;
}

/** Reads and checks the shard directory `dir`. */
export async function readShard(dir: string): Promise<Shard> {
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) throw new MergeError('not-a-shard', [dir], `${dir} is not a directory`);
  let json: ShardJson | undefined;
  try {
    json = await readShardJson(dir);
  } catch (e) {
    throw new MergeError('bad-shard', [dir], `${dir}/${SHARD_FILE} is not valid: ${(e as Error).message}`);
  }
  if (json === undefined) throw new MergeError('not-a-shard', [dir], `${dir} has no ${SHARD_FILE}: it is not a shard (ptlab run --shard i/n --out DIR writes one)`);
  const name = `shard ${json.shard}/${json.of} (${dir})`;
  if (fingerprintOf(json.matrix, json.ptlab) !== json.fingerprint) {
    throw new MergeError('bad-shard', [dir], `${name}: ${SHARD_FILE}'s fingerprint does not match the matrix it records (the file was changed)`);
  }
  if (json.status === 'running') {
    throw new MergeError('unfinished-shard', [dir], `${name} did not finish: its ${SHARD_FILE} says running (killed, or still running); run that shard again`);
  }
  let runs: TimedResult[];
  try {
    runs = parseResultsIndex(await readResultsIndexFile(dir));
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'is missing' : `is not valid: ${(e as Error).message}`;
    if (e instanceof PtError || (e as NodeJS.ErrnoException).code !== undefined) throw new MergeError('bad-shard', [dir], `${name}: ${RESULTS_FILE} ${why}`);
    throw e;
  }
  return { dir, json, runs, runDirs: new Set(await runDirsUnder(dir)) };
}

/** Every run directory (one holding result.json) under `root`, staging directories (`.…partial-…`) left out. */
async function runDirsUnder(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true });
    if (d !== root && entries.some((e) => e.isFile() && e.name === RUN_FILES.result)) out.push(relative(root, d).split(sep).join('/'));
    for (const e of entries) if (e.isDirectory() && !e.name.startsWith('.')) await walk(join(d, e.name));
  };
  await walk(root);
  return out.sort();
}
