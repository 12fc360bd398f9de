// The verdict matrix of the report (harness/report/html/matrix.ts): a cell's colour, text and link
// follow its worst verdict, from corrupt (PT reached memory the driver does not own) down to skip.
import { describe, expect, test } from 'vitest';
import { matrixHtml } from '../../harness/report/html/matrix.js';
import type { RunSummary } from '../../harness/report/html/view-model.js';

const run = (seed: number, verdict: RunSummary['verdict'], profile = 'skylake'): RunSummary =>
  ({ scenario: 's', target: 'sim', profile, seed, id: `run-${profile}-${seed}`, verdict });

/** The cells of the matrix's only row: [class, text, link]. */
function cells(runs: readonly RunSummary[]): [string, string, string | undefined][] {
  return [...matrixHtml(runs, () => true).matchAll(/<td class="([^"]+)"[^>]*>(?:<a href="#([^"]+)">)?([^<]*)/g)].map((m) => [m[1]!, m[3]!, m[2]]);
}

describe('the matrix orders verdicts from worst', () => {
  test('a cell with a corrupt run among failed and errored ones is corrupt: its colour, its count, its link', () => {
    expect(cells([run(1, 'fail'), run(2, 'error'), run(3, 'corrupt'), run(4, 'pass')])).toEqual([['v-corrupt', '1 corrupt / 4', 'run-skylake-3']]);
  });

  test.for([
    { worst: 'corrupt', others: ['fail', 'error', 'missing', 'pass', 'skip'] },
    { worst: 'fail', others: ['error', 'missing', 'pass', 'skip'] },
    { worst: 'error', others: ['missing', 'pass', 'skip'] },
    { worst: 'missing', others: ['pass', 'skip'] },
    { worst: 'pass', others: ['skip'] },
  ] as const)('$worst is worse than each of $others', ({ worst, others }) => {
    expect(others.map((o) => cells([run(1, o), run(2, worst)])[0]![0])).toEqual(others.map(() => `v-${worst}`));
  });

  test('a cell whose run had a negative control is marked, and its title names the control', () => {
    const html = matrixHtml([{ ...run(1, 'fail'), controls: ['driver fault skip-unmask'] }, run(1, 'fail', 'icelake')], () => true);
    const tds = [...html.matchAll(/<td class="[^"]*" title="([^"]*)"( data-controls="[^"]*")?>/g)].map((m) => [m[1], m[2] ?? '']);
    expect(tds).toEqual([['s on sim:skylake: fail (with driver fault skip-unmask)', ' data-controls="driver fault skip-unmask"'], ['s on sim:icelake: fail', '']]);
  });

  test('one run per cell: each cell shows its own verdict', () => {
    expect(cells([run(1, 'corrupt', 'skylake'), run(1, 'fail', 'icelake')]).map((c) => c.slice(0, 2))).toEqual([['v-corrupt', 'corrupt'], ['v-fail', 'fail']]);
  });
});
