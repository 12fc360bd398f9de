// The HTML report at full size (docs/report.md "Size and speed"): the report of the full matrix
// (`ptlab run --all --cpu all`, one seed: every scenario × profile) against its two targets —
// report.html under 5 MB, and chromium's load event under 2 s. The baseline, measured in the same
// browser in the same run, is an inert page of the same byte size (one <script type="application/json">
// of filler and a line of text): what chromium needs to read and parse that many bytes with nothing
// to lay out or run. report / baseline is then the cost of the page's own DOM and script. Loads are
// timed by Navigation Timing (navigation start → end of the load event) in a fresh context each,
// median of RUNS. Also reported: the time to write the report, and to open and draw the largest section.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { writeSuiteReport } from '../report/html/write-report.js';
import { BrowserError, launchChromium, loadEventMs } from './chromium.js';
import type { BenchSection } from './sections.js';

/** The targets of the full-size report: report.html under this many MB, its load event under this many seconds. */
export const REPORT_TARGETS = { megabytes: 5, openSeconds: 2 } as const;

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
/** --quick: three scenarios on every profile instead of every scenario. */
const QUICK_SCENARIOS = ['topa-grow', 'topa-stop', 'single-range-wrap'];

/** Makes the suite with the built CLI (exit 0, or 1 when a run fails: a report shows failures too). */
function makeSuite(out: string, quick: boolean): { runs: number; seconds: number } {
  const args = [CLI, 'run', ...(quick ? QUICK_SCENARIOS : ['--all']), '--cpu', 'all', '--seed', '1', '--out', out, '--json'];
  const t0 = performance.now();
  const r = spawnSync('node', args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0 && r.status !== 1) throw new Error(`ptlab run exited ${r.status ?? r.signal}: ${r.stderr.slice(-2000)}`);
  const doc = JSON.parse(r.stdout) as { counts: { runs: number } };
  return { runs: doc.counts.runs, seconds: (performance.now() - t0) / 1000 };
}

/** An inert page of exactly `bytes` bytes: the baseline. */
function baselinePage(bytes: number): string {
  const head = '<!doctype html><html><head><meta charset="utf-8"><title>baseline</title></head><body><p>baseline</p><script type="application/json">"';
  const tail = '"</script></body></html>\n';
  return head + 'x'.repeat(Math.max(0, bytes - head.length - tail.length)) + tail;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Median load-event time of `url` over `runs` fresh contexts. */
async function openMs(browser: Browser, url: string, runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    try {
      times.push(await loadEventMs(await context.newPage(), url));
    } finally {
      await context.close();
    }
  }
  return median(times);
}

/** Opens the section with the most embedded data and waits for its first chart: milliseconds, and its anchor. */
async function largestSectionMs(browser: Browser, url: string): Promise<{ id: string; ms: number }> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load' });
    return await page.evaluate(`new Promise((resolve) => {
      const data = [...document.querySelectorAll('script[type="application/json"][id^="d-"]')].sort((a, b) => b.textContent.length - a.textContent.length)[0];
      const id = data.id.slice(2), d = document.getElementById(id), t = performance.now();
      d.open = true;
      const check = () => (d.querySelector('canvas') || d.getAttribute('data-drawn') && !d.querySelector('.chart') ? resolve({ id, ms: performance.now() - t }) : requestAnimationFrame(check));
      check();
    })`) as { id: string; ms: number };
  } finally {
    await context.close();
  }
}

/** The report section of `npm run bench`. */
export const reportSection: BenchSection = {
  name: 'report',
  async run({ quick, check }) {
    const dir = mkdtempSync(join(tmpdir(), 'ptlab-bench-report-'));
    const runs = quick ? 3 : 5;
    try {
      const suite = join(dir, 'suite');
      const made = makeSuite(suite, quick);
      const t0 = performance.now();
      const path = await writeSuiteReport(suite);
      const writeS = (performance.now() - t0) / 1000;
      const bytes = statSync(path).size, mb = bytes / 1e6;
      const sizeMet = mb < REPORT_TARGETS.megabytes;
      const lines = [
        `report.html of ${quick ? `${QUICK_SCENARIOS.join(', ')} (--quick)` : 'the full matrix'}: ptlab run ${quick ? QUICK_SCENARIOS.join(' ') : '--all'} --cpu all --seed 1 ` +
          `(${made.runs} runs, ${made.seconds.toFixed(1)} s), MB = 10^6 bytes`,
        `written in ${writeS.toFixed(2)} s (ptlab report: read every run directory, render, write)`,
        `size: ${mb.toFixed(2)} MB (target < ${REPORT_TARGETS.megabytes} MB${sizeMet ? '' : ', NOT MET'})`,
      ];
      let browser: Browser;
      try {
        browser = await launchChromium();
      } catch (e) {
        if (!(e instanceof BrowserError)) throw e;
        return { lines: [...lines, `open: not measured: ${e.message}`], ok: !check && sizeMet };
      }
      try {
        const basePath = join(dir, 'baseline.html');
        writeFileSync(basePath, baselinePage(bytes));
        if (statSync(basePath).size !== bytes) throw new Error('the baseline page is not the size of the report');
        const report = await openMs(browser, pathToFileURL(path).href, runs);
        const base = await openMs(browser, pathToFileURL(basePath).href, runs);
        const openMet = report / 1000 < REPORT_TARGETS.openSeconds;
        const largest = await largestSectionMs(browser, pathToFileURL(path).href);
        const sectionBytes = readFileSync(path, 'utf8').match(new RegExp(`id="d-${largest.id}">(.*?)</script>`))?.[1]?.length ?? 0;
        lines.push(
          `open: load event ${(report / 1000).toFixed(3)} s, median of ${runs} (target < ${REPORT_TARGETS.openSeconds} s${openMet ? '' : ', NOT MET'}) in ${browser.version()}`,
          `baseline: an inert page of the same ${bytes} bytes: ${(base / 1000).toFixed(3)} s; ratio report/baseline ${(report / base).toFixed(2)}x`,
          `largest section (${largest.id}, ${(sectionBytes / 1e3).toFixed(1)} kB of data): opened and drawn in ${largest.ms.toFixed(0)} ms`,
        );
        return { lines, ok: !check || (sizeMet && openMet) };
      } finally {
        await browser.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
