// The HTML report `ptlab run` and `ptlab merge` write beside junit.xml (docs/report.md): the same
// page `ptlab report SUITE_DIR` makes. A report that cannot be written is said on stderr and
// changes nothing else: the run directories, junit.xml and the exit status stand.
import { ReportError } from '../report/html/errors.js';
import type { MadeSections } from '../report/html/suite-view.js';
import { writeSuiteReport } from '../report/html/write-report.js';
import type { CliIo } from './main.js';

/** Writes `dir`/report.html (with the sections `made` as runs ended); its path, or undefined after saying why it could not (as `command`). */
export async function writeReportAfter(dir: string, io: Pick<CliIo, 'err'>, command: string, made?: MadeSections): Promise<string | undefined> {
  try {
    return await writeSuiteReport(dir, undefined, made);
  } catch (e) {
    if (!(e instanceof ReportError)) throw e;
    io.err(`ptlab ${command}: no report.html: ${e.message}`);
    return undefined;
  }
}
