// Why `ptlab merge` refuses its shards (docs/sharding.md "Merge rules"): one problem code per
// rule, the shard directories it concerns, and a message naming them. Nothing is written when it
// is thrown.
import { PtError } from '../../driver/base/errors.js';

/** What is wrong with the shards given (scripts and tests branch on it, never on the message). */
export type MergeProblem =
  /** A directory without shard.json: not one `ptlab run --shard` wrote. */
  | 'not-a-shard'
  /** shard.json or results.jsonl is not valid, or the fingerprint does not match the matrix it records. */
  | 'bad-shard'
  /** shard.json still says `running`: the shard was killed or is still going (it has no results.jsonl). */
  | 'unfinished-shard'
  /** Two shards were cut from different matrices (fingerprint), or into a different number of shards. */
  | 'different-matrix'
  /** The same shard i/n given twice. */
  | 'duplicate-shard'
  /** A shard of 1..n not given. */
  | 'missing-shard'
  /** Two shards hold the same cell (a result or a run directory). */
  | 'duplicate-cell'
  /** A shard holds a cell that the assignment gives to another shard, or that is not in its matrix. */
  | 'foreign-cell'
  /** A run a shard's results.jsonl lists has no run directory there, though its verdict keeps one (deleted, or copied in part). */
  | 'missing-run'
  /** --out is one of the shards, inside one, or holds one. */
  | 'bad-out';

/** Shards `ptlab merge` cannot join; `shards` names the directories (or `i/n` of a missing shard) concerned. */
export class MergeError extends PtError {
  override readonly name = 'MergeError';
  constructor(readonly problem: MergeProblem, readonly shards: readonly string[], message: string) {
    super('bad_config', message);
  }
}
