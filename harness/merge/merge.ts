// `ptlab merge` (docs/sharding.md): joins the shard directories of one matrix into one suite
// directory, the one an unsharded `ptlab run` of that matrix writes: the run directories at their
// places, junit.xml and results.jsonl of every run in the unsharded order. Steps: read every shard
// → check the set (check-shards.ts) → prepare --out (as `ptlab run` does: new or empty, or --force)
// → place each run directory (place-run.ts) → write junit.xml and results.jsonl. Nothing is
// written until every check has passed.
import { PtError } from '../../driver/base/errors.js';
import { join, relative, resolve, sep } from 'node:path';
import { junitSweepXml, junitXml } from '../report/junit.js';
import { RESULTS_FILE, resultsIndexText, type TimedResult } from '../rundir/results-index.js';
import { removeShardJson } from '../runner/shard.js';
import { prepareOut } from '../report/out-dir.js';
import { runDirOf } from '../runner/suite.js';
import { checkShards, type ShardSet } from './check-shards.js';
import { MergeError } from './errors.js';
import { placeRun, type Placed } from './place-run.js';
import { readShard, shardName } from './read-shard.js';
import { replaceFile } from '../report/owned-files.js';

/** What to merge, and where. */
export interface MergeRequest {
  readonly shards: readonly string[];
  readonly out: string;
  /** --out may hold an earlier suite: its run directories are replaced (files ptlab did not write are kept). */
  readonly force?: boolean;
  /** Copy run files instead of hard-linking them. */
  readonly copy?: boolean;
  /** Stops the merge between two run directories (PtError 'aborted'): no run is left half-placed. */
  readonly signal?: AbortSignal;
}

/** What a merge produced. */
export interface MergeOutcome {
  readonly set: ShardSet;
  /** Every run of the shards, in the unsharded order. */
  readonly runs: readonly TimedResult[];
  /** Why the merged suite is incomplete: the reasons of the shards that stopped early. */
  readonly incomplete?: string;
  /** Shards that stopped at their first failure (--fail-fast): fewer runs than cells. */
  readonly stoppedEarly: readonly string[];
  readonly placed: Placed;
}

/** Run directories placed at once. */
const PLACE_AT_ONCE = 8;

/** Is `a` the directory `b` or inside it? */
const within = (a: string, b: string): boolean => { const r = relative(resolve(b), resolve(a)); return r === '' || (!r.startsWith('..') && !r.startsWith('/')); };

/** Merges the shards of `req` into `req.out`; throws MergeError (nothing written) when they do not belong together. */
export async function mergeShards(req: MergeRequest): Promise<MergeOutcome> {
  if (req.shards.length === 0) throw new MergeError('missing-shard', [], 'no shard directory given');
  for (const d of req.shards) {
    if (within(req.out, d) || within(d, req.out)) throw new MergeError('bad-out', [d], `--out ${req.out} and the shard ${d} overlap: give a directory outside every shard`);
  }
  const shards = [];
  for (const d of req.shards) shards.push(await readShard(d));
  const set = checkShards(shards);
  await prepareOut(req.out, req.force);
  await removeShardJson(req.out);
  const placed: Placed = { linked: 0, copied: 0, notMerged: [] };
  // Runs are placed PLACE_AT_ONCE at a time (each is a few file-system calls that mostly wait);
  // the files not merged are listed in the suite's order whatever order the runs finish in.
  const notMerged: string[][] = [];
  let next = 0;
  const placer = async (): Promise<void> => {
    for (let i = next++; i < set.runs.length; i = next++) {
      if (req.signal?.aborted) throw new PtError('aborted', `interrupted after placing ${placed.linked + placed.copied} run files; no junit.xml or results.jsonl was written: merge again with --force`);
      const { run: { result: r }, shard } = set.runs[i]!;
      const sweepSeed = set.matrix.sweep ? r.seed : undefined;
      const src = runDirOf(shard.dir, r.scenario, r.profile, sweepSeed);
      if (!shard.runDirs.has(relative(shard.dir, src).split(sep).join('/'))) continue;
      const own: Placed = { linked: 0, copied: 0, notMerged: [] };
      await placeRun(src, runDirOf(req.out, r.scenario, r.profile, sweepSeed), req.copy === true, own);
      placed.linked += own.linked;
      placed.copied += own.copied;
      notMerged[i] = own.notMerged;
    }
  };
  const placers = await Promise.allSettled(Array.from({ length: PLACE_AT_ONCE }, placer));
  const failed = placers.find((x): x is PromiseRejectedResult => x.status === 'rejected');
  if (failed) throw failed.reason;
  for (const n of notMerged) if (n) placed.notMerged.push(...n);
  const runs = set.runs.map((x) => x.run);
  const reasons = set.shards.filter((s) => s.json.status === 'incomplete').map((s) => `${shardName(s)}: ${s.json.incomplete ?? 'incomplete'}`);
  const incomplete = reasons.length ? reasons.join('; ') : undefined;
  await replaceFile(join(req.out, 'junit.xml'), set.matrix.sweep ? junitSweepXml(runs, incomplete) : junitXml(runs, incomplete));
  await replaceFile(join(req.out, RESULTS_FILE), resultsIndexText(runs));
  const stoppedEarly = set.shards.filter((s) => s.json.status === 'done' && s.runs.length < s.json.shardCells)
    .map((s) => `${shardName(s)} made ${s.runs.length} of its ${s.json.shardCells} runs (--fail-fast)`);
  return { set, runs, ...(incomplete === undefined ? {} : { incomplete }), stoppedEarly, placed };
}
