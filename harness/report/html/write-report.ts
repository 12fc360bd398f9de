// `writeSuiteReport`: a suite directory's report.html (docs/report.md), written whole or not at all
// (into a temporary file next to it, then renamed). Steps: find the chart library (the page is
// useless without it, so first) → read the suite, one run at a time → render → write.
import { rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
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
  const chart = await loadChartLibrary();
  const suite = await suiteView(suiteDir, made);
  const html = reportPage(suite, chart, { generated: new Date().toISOString() });
  const path = resolve(out);
  const tmp = join(dirname(path), `.${REPORT_FILE}.partial-${process.pid}-${Date.now()}`);
  try {
    await writeFile(tmp, html);
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw new ReportError('write-failed', path, `cannot write ${path}: ${(e as Error).message}`, { cause: e });
  }
  return path;
}
