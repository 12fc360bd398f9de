// `ptlab merge SHARD_DIR… --out SUITE [--force] [--copy]`: joins the directories of `ptlab run
// --shard i/n` into the suite an unsharded run writes (harness/merge/, docs/sharding.md): run
// directories hard-linked (copied across file systems, or with --copy), one junit.xml, one
// results.jsonl, and the summary table on stdout. Exit as `ptlab run`: 0 every verdict passed, 1 a
// verdict failed (fail or corrupt), 4 a shard stopped early (incomplete) or a file could not be written; 2 when the
// shards do not belong together (missing, given twice, another matrix, a cell held twice), or for
// a bad command line: then nothing is written.
import { PtError } from '../../../driver/base/errors.js';
import { mergeShards, type MergeRequest } from '../../merge/merge.js';
import { isFailure } from '../../rundir/result.js';
import { summaryTable, sweepTable } from '../../report/summary.js';
import { commandArgs, parseCommandLine, UsageError, type OptionSpec } from '../args.js';
import { EXIT, EXIT_TABLE } from '../exit-codes.js';
import type { CliIo } from '../main.js';
import { writeReportAfter } from '../suite-report.js';
import { StopOnSignal } from '../stop-signals.js';

export const MERGE_USAGE = [
  'usage: ptlab merge SHARD_DIR… --out SUITE [--force] [--copy]',
  '  joins the --out directories of `ptlab run … --shard i/n` (every i of one n, one matrix) into SUITE:',
  '  the run directories (hard-linked; copied across file systems or with --copy), junit.xml, results.jsonl',
  '  --out must be new or empty; --force replaces an earlier suite\'s run directories there (never other files)',
  '  exit 0: every verdict passed; 1: a verdict failed; 2: the shards do not belong together, or bad usage; 4: a shard was incomplete',
].join('\n');

/** `ptlab merge`'s options. */
export const MERGE_OPTIONS = {
  out: { type: 'string' }, force: { type: 'boolean' }, copy: { type: 'boolean' },
} as const satisfies Record<string, OptionSpec>;

function mergeArgs(argv: string[]): MergeRequest | 'help' {
  const { values: v, positionals, help } = parseCommandLine(argv, MERGE_OPTIONS);
  if (help) return 'help';
  if (v.out === undefined) throw new UsageError('--out SUITE is required: the directory the merged suite goes to');
  if (positionals.length === 0) throw new UsageError('no shard directory given');
  return { shards: positionals, out: v.out, force: v.force === true, copy: v.copy === true };
}

/** errno codes of a file that cannot be written: the merge is incomplete (exit 4), not a usage error. */
const WRITE_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'EFBIG']);

/** `ptlab merge`. */
export async function mergeCommand(argv: string[], io: CliIo): Promise<number> {
  const req = commandArgs('merge', `${MERGE_USAGE}\n${EXIT_TABLE}`, io, () => mergeArgs(argv));
  if (typeof req === 'number') return req;
  using stop = new StopOnSignal(io, 'merge', 'stopping after the run directories being placed');
  try {
    const m = await mergeShards({ ...req, signal: stop.signal });
    const { set, runs, placed } = m;
    const results = runs.map((r) => r.result);
    for (const s of m.stoppedEarly) io.err(`ptlab merge: ${s}`);
    if (set.strays.length) io.err(`ptlab merge: ${set.strays.length} run director(ies) not in the matrix, not merged (first: ${set.strays[0]})`);
    if (placed.notMerged.length) io.err(`ptlab merge: ${placed.notMerged.length} file(s) in run directories not ptlab's, not merged (first: ${placed.notMerged[0]})`);
    if (m.incomplete) io.err(`ptlab merge: INCOMPLETE: ${m.incomplete}`);
    const report = await writeReportAfter(req.out, io, 'merge');
    io.out(`${set.matrix.sweep ? sweepTable(results) : summaryTable(results)}${m.incomplete ? `INCOMPLETE: ${m.incomplete}\n` : ''}` +
      `merged ${set.count} shard(s) of ${set.cells} cells (${set.fingerprint.slice(0, 19)}…): ${results.length} runs; ` +
      `run files ${placed.linked} hard-linked, ${placed.copied} copied → ${req.out}, junit: ${req.out}/junit.xml${report ? `\nreport: ${report}` : ''}`);
    if (m.incomplete) return EXIT.incomplete;
    return results.some((r) => isFailure(r.verdict)) ? EXIT.failed : EXIT.ok;
  } catch (e) {
    if (e instanceof PtError && e.code === 'aborted' && stop.status !== undefined) {
      io.err(`ptlab merge: ${e.message}`);
      return stop.status;
    }
    if (e instanceof PtError && e.code === 'bad_config') {
      io.err(`ptlab merge: ${e.message}`);
      return EXIT.usage;
    }
    if (WRITE_ERRORS.has((e as NodeJS.ErrnoException).code ?? '')) {
      io.err(`ptlab merge: cannot write the merged suite: ${(e as Error).message}`);
      return EXIT.incomplete;
    }
    throw e;
  }
}
