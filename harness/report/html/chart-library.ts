// The chart library the report inlines: uPlot (npm `uplot`, MIT, a dependency of ptlab), read from
// node_modules when the report is written, so the page needs no network to draw (docs/report.md
// "Charts"). Its minified code and stylesheet go into the page as they are, made safe to sit inside
// a <script>/<style> element.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ReportError } from './errors.js';

/** The library's code and stylesheet, ready to inline. */
export interface ChartLibrary {
  readonly name: string;
  readonly version: string;
  readonly js: string;
  readonly css: string;
}

const PACKAGE = 'uplot';
const FILES = { js: 'dist/uPlot.iife.min.js', css: 'dist/uPlot.min.css' } as const;

/** Reads uPlot from node_modules; ReportError('chart-library-missing') when it is not installed. */
export async function loadChartLibrary(from: string = import.meta.url): Promise<ChartLibrary> {
  let root: string;
  try {
    root = dirname(createRequire(from).resolve(`${PACKAGE}/package.json`));
  } catch (e) {
    throw new ReportError('chart-library-missing', PACKAGE,
      `the chart library is missing: npm package '${PACKAGE}' (uPlot) is not installed; run 'npm ci' in the ptlab checkout (it is one of ptlab's dependencies)`, { cause: e });
  }
  try {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version?: unknown };
    const [js, css] = await Promise.all([readFile(join(root, FILES.js), 'utf8'), readFile(join(root, FILES.css), 'utf8')]);
    return { name: 'uPlot', version: typeof pkg.version === 'string' ? pkg.version : 'unknown', js: inlineScript(js), css: inlineStyle(css) };
  } catch (e) {
    throw new ReportError('chart-library-missing', root,
      `the chart library in ${root} is incomplete (${FILES.js} or ${FILES.css} cannot be read: ${(e as Error).message}); reinstall it with 'npm ci'`, { cause: e });
  }
}

/** `js` with every `</script` and `<!--` broken up, so the HTML parser cannot end the element early. */
export function inlineScript(js: string): string {
  return js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** `css` with every `</style` broken up. */
export function inlineStyle(css: string): string {
  return css.replace(/<\/(style)/gi, '<\\/$1');
}
