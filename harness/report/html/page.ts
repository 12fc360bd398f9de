// The report page (docs/report.md): one self-contained HTML file. The matrix and one line per run
// are HTML; what a run's section shows is embedded once as JSON (one element per run, parsed only
// when the section opens) and drawn then by the page's script with the inlined chart library, so a
// matrix of hundreds of runs opens fast. A Content-Security-Policy forbids every request the page
// could make: it works offline, and a test can tell it makes none.
import { controlsLine } from '../controls.js';
import { isBad, VERDICTS } from '../../rundir/result.js';
import type { ChartLibrary } from './chart-library.js';
import { CLIENT_SCRIPT } from './client-script.js';
import { embedJson, esc } from './escape.js';
import { matrixHtml, WORST } from './matrix.js';
import { PAGE_STYLE } from './page-style.js';
import type { RunSummary, RunView, SuiteView } from './view-model.js';

/** What the page says about itself. */
export interface PageInfo {
  /** When it was written (ISO time). */
  readonly generated: string;
}

const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

/** The whole page. */
export function reportPage(suite: SuiteView, chart: ChartLibrary, info: PageInfo): string {
  const linked = new Set(suite.runs.filter(hasSection).map((r) => r.summary.id));
  const summaries = suite.runs.map((r) => r.summary);
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>ptlab report: ${esc(suite.dir)}</title>`,
    `<style>${chart.css}</style>`,
    `<style>${PAGE_STYLE}</style>`,
    '</head><body>',
    headerHtml(suite, summaries, info, chart),
    '<section id="matrix"><h2>Verdicts</h2>',
    matrixHtml(summaries, (r) => linked.has(r.id)),
    '</section>',
    failuresHtml(summaries, linked),
    '<section id="runs"><h2>Runs</h2>',
    ...suite.runs.filter(hasSection).map(sectionHtml),
    '</section>',
    ...suite.runs.filter((r) => r.detail !== undefined).map((r) => `<script type="application/json" id="d-${esc(r.summary.id)}">${embedJson(r.detail)}</script>`),
    `<script>${chart.js}</script>`,
    `<script>${CLIENT_SCRIPT}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}

/** A run gets a section when it has a directory, or when results.jsonl gives a reason worth reading (fail, corrupt, error). */
function hasSection(r: RunView): boolean {
  return r.summary.dir !== undefined || isBad(r.summary.verdict);
}

/** The header's counts, in the order summaries list verdicts. */
const COUNTED: readonly RunSummary['verdict'][] = [...VERDICTS, 'missing'];

function headerHtml(suite: SuiteView, runs: readonly RunSummary[], info: PageInfo, chart: ChartLibrary): string {
  const counts = COUNTED.map((v) => [v, runs.filter((r) => r.verdict === v).length] as const).filter(([v, n]) => n > 0 || v === 'pass' || v === 'fail');
  const problems = suite.problems.map((p) => `<li>${esc(p.file)}: ${esc(p.problem)} — ${esc(p.detail)}</li>`).join('');
  const controls = controlsLine([...new Set(runs.flatMap((r) => r.controls ?? []))]);
  return `<header><h1>ptlab report</h1><p class="meta">suite <code>${esc(suite.dir)}</code> · ${runs.length} runs: ` +
    `${counts.map(([v, n]) => `<span class="badge v-${v}">${n} ${v}</span>`).join(' ')}` +
    ` · written ${esc(info.generated)} by ptlab report · charts: ${esc(chart.name)} ${esc(chart.version)}</p>` +
    (controls ? `<p class="controls">${esc(controls)}</p>` : '') +
    (problems ? `<ul class="problems">${problems}</ul>` : '') + '</header>';
}

/** Links to the corrupt, failed, errored and missing runs, worst first (the matrix's order), then in the suite's order. */
function failuresHtml(runs: readonly RunSummary[], linked: ReadonlySet<string>): string {
  const bad = runs.filter((r) => (isBad(r.verdict) || r.verdict === 'missing') && linked.has(r.id))
    .sort((x, y) => WORST.indexOf(x.verdict) - WORST.indexOf(y.verdict));
  if (bad.length === 0) return '';
  const items = bad.slice(0, 200).map((r) => `<li><a href="#${esc(r.id)}"><span class="badge v-${r.verdict}">${r.verdict}</span> ${esc(label(r))}</a>${r.reason ? ` — ${esc(r.reason)}` : ''}</li>`);
  return `<section id="failures"><h2>Not passed (${bad.length})</h2><ul>${items.join('')}</ul></section>`;
}

/** Where a run ran: `[host ]target:profile, seed S`. */
const where = (r: RunSummary): string => `${r.host === undefined ? '' : `${r.host} `}${r.target}:${r.profile}, seed ${r.seed}`;
const label = (r: RunSummary): string => `${r.scenario} on ${where(r)}`;

/** One run: a collapsed section whose body the script draws on opening; a skip is one line. */
function sectionHtml(r: RunView): string {
  const s = r.summary;
  const head = `<span class="badge v-${s.verdict}">${s.verdict}</span> <b>${esc(s.scenario)}</b> on ${esc(where(s))}` +
    `${s.controls ? ` · <span class="ctl">with ${esc(s.controls.join(', '))}</span>` : ''}${s.ms === undefined ? '' : ` · ${s.ms} ms`}${s.reason ? ` <span class="reason">— ${esc(s.reason)}</span>` : ''}`;
  if (r.detail === undefined) {
    const where = s.dir === undefined ? ' <span class="dim">(no run directory)</span>' : '';
    return `<p class="run line v-${s.verdict}" id="${esc(s.id)}">${head}${where}</p>`;
  }
  return `<details class="run v-${s.verdict}" id="${esc(s.id)}"><summary>${head}</summary>` +
    `<div class="body" data-dir="${esc(s.dir ?? '')}"><p class="dim">drawing…</p></div></details>`;
}
