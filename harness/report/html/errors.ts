// Why `ptlab report` could not write its page (docs/report.md): one problem code each. A damaged
// run directory is never one of them: it shows as "missing" or "malformed" in its own section.
import { PtError, type PtErrorCode } from '../../../driver/base/errors.js';

/** What went wrong (the CLI picks its exit status by it, never by the message). */
export type ReportProblem =
  /** The directory does not exist, or holds no run directory, results.jsonl or junit.xml. */
  | 'not-a-suite'
  /** The chart library (the `uplot` npm package) is not installed, so its code cannot be inlined. */
  | 'chart-library-missing'
  /** report.html (or the --out file) could not be written. */
  | 'write-failed'
  /** Something ptlab did not write is where the page would go (a file, a device, a directory): it is left as it is. */
  | 'foreign-file';

const CODES: Readonly<Record<ReportProblem, PtErrorCode>> = {
  'not-a-suite': 'bad_config',
  'chart-library-missing': 'unsupported',
  // The file named (or implied) by --out cannot be written: a configuration the host refuses.
  'write-failed': 'bad_config',
  'foreign-file': 'bad_config',
};

/** A report that cannot be written; `path` names the directory or file concerned. */
export class ReportError extends PtError {
  override readonly name = 'ReportError';
  constructor(readonly problem: ReportProblem, readonly path: string, message: string, options?: ErrorOptions) {
    super(CODES[problem], message, options);
  }
}
