// `ptlab diff A B [--json] [--timing]` and `ptlab diff --suite A B`: two run directories (or two
// suite directories) compared: verdicts and expectations, the memory oracle's corrupt events and
// leaked buffers, transcripts (addresses by role, no
// timestamps), packets (timing packets left out unless --timing), flow and loss ledgers
// (harness/diff/). Exit 0 when equal, 1 when they differ, 2 for bad usage or unreadable input.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PtError } from '../../../driver/base/errors.js';
import { diffRuns, type RunDiff } from '../../diff/run-diff.js';
import { diffSuites, suiteMatrix } from '../../diff/suite-diff.js';
import { commandArgs, parseCommandLine, UsageError } from '../args.js';
import type { CliIo } from '../main.js';
import { isOutputError } from '../fd-sink.js';
import { NotARunDirError } from '../../rundir/read-result.js';
import { RESULTS_FILE } from '../../rundir/results-index.js';

export const DIFF_USAGE = 'usage: ptlab diff RUN_A RUN_B [--json] [--timing]\n' +
  '       ptlab diff --suite SUITE_A SUITE_B [--json] [--timing]\n' +
  '  compares verdicts and expectations, corrupt events and leaked buffers, transcripts (physical addresses by buffer role, no timestamps),\n' +
  '  packets (timing packets left out unless --timing), flow and loss ledgers; prints the first divergence\n' +
  '  of each section. exit 0: equal; 1: they differ; 2: bad usage or not a run/suite directory\n';

const OPTIONS = { json: { type: 'boolean' }, timing: { type: 'boolean' }, suite: { type: 'boolean' } } as const;

interface DiffArgs { readonly a: string; readonly b: string; readonly json: boolean; readonly timing: boolean; readonly suite: boolean }

function diffArgs(argv: string[]): DiffArgs | 'help' {
  const { values, positionals, help } = parseCommandLine(argv, OPTIONS);
  if (help) return 'help';
  if (positionals.length !== 2) throw new UsageError(`two directories to compare, got ${positionals.length}`);
  return { a: positionals[0]!, b: positionals[1]!, json: values.json === true, timing: values.timing === true, suite: values.suite === true };
}

/** A run's comparison as text: one line per section, the first divergence with its context. */
function runText(d: RunDiff): string {
  const out = [`ptlab diff ${d.a} ${d.b}: ${d.equal ? 'equal' : 'they differ'}`];
  for (const s of d.sections) {
    out.push(`  ${s.status === 'equal' ? 'equal ' : 'DIFFER'} ${s.section}: ${s.detail}${s.rule ? ` [rule ${s.rule}]` : ''}`);
    if (s.first) {
      out.push(`         A: ${s.first.a.join('\n            ')}`);
      out.push(`         B: ${s.first.b.join('\n            ')}`);
    }
  }
  return out.join('\n');
}

export async function diffCommand(argv: string[], io: CliIo): Promise<number> {
  const args = commandArgs('diff', DIFF_USAGE, io, () => diffArgs(argv));
  if (typeof args === 'number') return args;
  const opts = { timing: args.timing };
  try {
    if (args.suite) {
      const d = await diffSuites(args.a, args.b, opts);
      if (args.json) io.out(JSON.stringify(d));
      else {
        io.out(`ptlab diff --suite ${d.a} ${d.b}: ${d.equal ? 'equal' : 'they differ'}`);
        io.out(suiteMatrix(d));
        for (const c of d.cells) if (c.diff && !c.diff.equal) io.out(runText(c.diff));
      }
      return d.equal ? 0 : 1;
    }
    const d = await diffRuns(args.a, args.b, opts);
    io.out(args.json ? JSON.stringify(d) : runText(d));
    return d.equal ? 0 : 1;
  } catch (e) {
    if (!isOutputError(e) && (e instanceof PtError || (e as NodeJS.ErrnoException).code !== undefined)) {
      io.err(`ptlab diff: ${(e as Error).message}${e instanceof NotARunDirError ? await suiteHint(args) : ''}`);
      return 2;
    }
    throw e;
  }
}

/** When the two directories are suites (each holds results.jsonl): how to compare them. */
async function suiteHint(args: DiffArgs): Promise<string> {
  const suites = await Promise.all([args.a, args.b].map((d) => stat(join(d, RESULTS_FILE)).then((s) => s.isFile(), () => false)));
  return suites.every(Boolean) ? `\n(both hold ${RESULTS_FILE}: they are suites; compare them with ptlab diff --suite ${args.a} ${args.b})` : '';
}
