// The verdict matrix at the top of the report (docs/report.md "The page"): scenarios × profiles
// (× hosts when the results name them), each cell the verdict of its run linking to the run's
// section, or the counts when a cell holds several runs (a seed sweep).
import { esc } from './escape.js';
import type { RunSummary } from './view-model.js';

/**
 * Cell colour precedence: the worst verdict of a cell decides its colour and its link. corrupt
 * (PT wrote where it must not) is worse than fail.
 */
export const WORST: readonly RunSummary['verdict'][] = ['corrupt', 'fail', 'error', 'missing', 'pass', 'skip'];

/** A column: a host (or none) and a target:profile. */
interface Column { readonly host?: string; readonly label: string }

const columnKey = (r: RunSummary): string => `${r.host ?? ''}\u0000${r.target}:${r.profile}`;

/** The matrix as an HTML table; `linked` tells which runs have a section to link to. */
export function matrixHtml(runs: readonly RunSummary[], linked: (r: RunSummary) => boolean): string {
  const columns = new Map<string, Column>();
  const scenarios: string[] = [];
  const cells = new Map<string, RunSummary[]>();
  for (const r of runs) {
    if (!columns.has(columnKey(r))) columns.set(columnKey(r), { ...(r.host === undefined ? {} : { host: r.host }), label: `${r.target}:${r.profile}` });
    if (!scenarios.includes(r.scenario)) scenarios.push(r.scenario);
    const k = `${r.scenario}\u0000${columnKey(r)}`;
    cells.set(k, [...(cells.get(k) ?? []), r]);
  }
  const cols = [...columns];
  const hosts = cols.some(([, c]) => c.host !== undefined);
  const head = [
    ...(hosts ? [`<tr><th></th>${hostGroups(cols.map(([, c]) => c.host ?? '(no host)'))}</tr>`] : []),
    `<tr><th>scenario</th>${cols.map(([, c]) => `<th>${esc(c.label)}</th>`).join('')}</tr>`,
  ];
  const rows = scenarios.map((s) => `<tr><th>${esc(s)}</th>${cols.map(([k]) => cellHtml(cells.get(`${s}\u0000${k}`) ?? [], linked)).join('')}</tr>`);
  return `<table class="matrix"><thead>${head.join('')}</thead><tbody>${rows.join('\n')}</tbody></table>`;
}

/** The host header row: one cell spanning each run of equal hosts. */
function hostGroups(hosts: readonly string[]): string {
  const out: string[] = [];
  for (let i = 0; i < hosts.length;) {
    let j = i;
    while (j < hosts.length && hosts[j] === hosts[i]) j++;
    out.push(`<th colspan="${j - i}" class="host">${esc(hosts[i]!)}</th>`);
    i = j;
  }
  return out.join('');
}

function cellHtml(rs: readonly RunSummary[], linked: (r: RunSummary) => boolean): string {
  if (rs.length === 0) return '<td class="none">–</td>';
  const worst = WORST.find((v) => rs.some((r) => r.verdict === v)) ?? 'missing';
  const target = rs.find((r) => r.verdict === worst && linked(r)) ?? rs.find(linked);
  const text = rs.length === 1 ? worst : `${rs.filter((r) => r.verdict === worst).length} ${worst} / ${rs.length}`;
  const controls = [...new Set(rs.flatMap((r) => r.controls ?? []))];
  const withControls = controls.length ? ` (with ${controls.join(', ')})` : '';
  const title = (rs.length === 1 ? `${rs[0]!.scenario} on ${rs[0]!.target}:${rs[0]!.profile}: ${rs[0]!.verdict}${rs[0]!.reason ? ` — ${rs[0]!.reason}` : ''}` : `${rs.length} runs`) + withControls;
  // A run with a negative control is marked in its cell (a flag drawn by the style, so the cell's
  // text stays its verdict): its FAIL is the outcome it should have.
  const mark = controls.length ? ` data-controls="${esc(controls.join(', '))}"` : '';
  const inner = target ? `<a href="#${esc(target.id)}">${esc(text)}</a>` : esc(text);
  return `<td class="v-${worst}" title="${esc(title)}"${mark}>${inner}</td>`;
}
