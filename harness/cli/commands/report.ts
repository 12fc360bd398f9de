// `ptlab report SUITE_DIR [--out FILE]`: the suite's HTML report (harness/report/html/,
// docs/report.md): one self-contained page, SUITE_DIR/report.html by default, with the verdict
// matrix and a section per run (ToPA layout, region fill, PMI timeline, loss ledger, expectations,
// the transcript around the first failure). Exit 0 written; 2 bad usage or not a suite directory;
// 3 the chart library (npm package uplot) is not installed; 4 the file could not be written.
import { ReportError } from '../../report/html/errors.js';
import { writeSuiteReport } from '../../report/html/write-report.js';
import { commandArgs, parseCommandLine, UsageError, type OptionSpec } from '../args.js';
import { EXIT } from '../exit-codes.js';
import type { CliIo } from '../main.js';

export const REPORT_USAGE = [
  'usage: ptlab report SUITE_DIR [--out FILE]',
  '  writes one self-contained HTML page (no network needed) for the --out directory of `ptlab run` or `ptlab merge`:',
  '  the scenario × profile verdict matrix, and per run its ToPA layout, region fill, PMI timeline, loss ledger,',
  '  expectations and the transcript around the first failure. Default FILE: SUITE_DIR/report.html',
  '  FILE, when it exists, must be a report ptlab wrote: anything else there (a file, a device, a directory) is left as it is',
  '  exit 0: written; 2: bad usage, not a suite directory, or FILE is not ptlab\'s; 3: the chart library (npm package uplot) is missing; 4: cannot write FILE',
].join('\n');

const OPTIONS = { out: { type: 'string' } } as const satisfies Record<string, OptionSpec>;

function reportArgs(argv: string[]): { suite: string; out?: string } | 'help' {
  const { values, positionals, help } = parseCommandLine(argv, OPTIONS);
  if (help) return 'help';
  if (positionals.length !== 1) throw new UsageError(`one suite directory, got ${positionals.length}`);
  return { suite: positionals[0]!, ...(values.out === undefined ? {} : { out: values.out }) };
}

const STATUS = { 'not-a-suite': EXIT.usage, 'chart-library-missing': EXIT.unavailable, 'write-failed': EXIT.incomplete, 'foreign-file': EXIT.usage } as const;

/** `ptlab report`. */
export async function reportCommand(argv: string[], io: CliIo): Promise<number> {
  const args = commandArgs('report', REPORT_USAGE, io, () => reportArgs(argv));
  if (typeof args === 'number') return args;
  try {
    const path = await writeSuiteReport(args.suite, args.out);
    io.out(`report: ${path}`);
    return EXIT.ok;
  } catch (e) {
    if (!(e instanceof ReportError)) throw e;
    io.err(`ptlab report: ${e.message}`);
    return STATUS[e.problem];
  }
}
