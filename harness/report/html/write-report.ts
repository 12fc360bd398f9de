// `writeSuiteReport`: a suite directory's report.html (docs/report.md), written whole or not at all
// (into a temporary file next to it, then renamed). Steps: check the destination (it replaces only
// a page of ptlab's) → find the chart library (the page is useless without it) → read the suite,
// one run at a time → render → write.
import { join, resolve } from 'node:path';
import { PtError } from '../../../driver/base/errors.js';
import { refusePseudoFs } from '../out-dir.js';
import { assertReplaceable, replaceFile } from '../owned-files.js';
import { loadChartLibrary } from './chart-library.js';
import { ReportError } from './errors.js';
import { reportPage } from './page.js';
import { suiteView, type MadeSections } from './suite-view.js';

/** The report's file name inside the suite directory. */
export const REPORT_FILE = 'report.html';

/**
 * Writes the report of `suiteDir` to `out` (default `suiteDir/report.html`); returns its path. Throws
 * ReportError. `made`: sections the suite's lanes made as their runs ended (suite-view.ts).
 */
export async function writeSuiteReport(suiteDir: string, out: string = join(suiteDir, REPORT_FILE), made?: MadeSections): Promise<string> {
  const path = resolve(out);
  // Before any work: the page replaces only a page of ptlab's (never a device node, a directory or a foreign file).
  try {
    await refusePseudoFs(path, 'the report');
    await assertReplaceable(path, REPORT_FILE);
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    throw new ReportError('foreign-file', path, e.message, { cause: e });
  }
  const chart = await loadChartLibrary();
  const suite = await suiteView(suiteDir, made);
  const html = reportPage(suite, chart, { generated: new Date().toISOString() });
  try {
    await replaceFile(path, html);
  } catch (e) {
    throw new ReportError('write-failed', path, `cannot write ${path}: ${(e as Error).message}`, { cause: e });
  }
  return path;
}
