// What the report reads out of a suite (harness/report/html/): the ToPA layout, the region fill,
// the PMI timeline and the excerpt from real runs on the sim; damaged run directories shown as
// missing or malformed instead of crashing; `ptlab report`'s output and exit statuses.
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { loadChartLibrary } from '../../harness/report/html/chart-library.js';
import { ReportError } from '../../harness/report/html/errors.js';
import { anchorsOf, suiteView } from '../../harness/report/html/suite-view.js';
import type { RunView, SuiteView } from '../../harness/report/html/view-model.js';
import { writeSuiteReport } from '../../harness/report/html/write-report.js';
import type { ResultJson } from '../../harness/rundir/result.js';
import { tmpRoot } from '../scenarios/tmp.js';
import { CORRUPT, corruptCopy, makeSuite, SUITE } from './suite.js';

let root = '', suite = '', results: ResultJson[] = [], view: SuiteView;
beforeAll(async () => {
  root = await tmpRoot('ptlab-report-view-');
  suite = join(root, 'suite');
  results = await makeSuite(suite);
  view = await suiteView(suite);
}, 120_000);

const run = (id: string): RunView => view.runs.find((r) => r.summary.id === id)!;

async function ptlab(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [], err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('the view of a suite', () => {
  test('lists every run of results.jsonl in order, with its verdict and an anchor', () => {
    expect(view.runs.map((r) => [r.summary.scenario, r.summary.profile, r.summary.verdict])).toEqual(results.map((r) => [r.scenario, r.profile, r.verdict]));
    expect(new Set(view.runs.map((r) => r.summary.id)).size).toBe(results.length);
  });

  test('a skipped run has no section body', () => {
    expect([run(SUITE.skipped.id).summary.verdict, run(SUITE.skipped.id).detail]).toEqual(['skip', undefined]);
  });

  test('the ToPA layout names tables and regions by buffer role; each table ends in an END naming a table of the layout', () => {
    const tables = run(SUITE.passing.id).detail!.topa.tables;
    const ends = tables.map((t) => t.entries[t.entries.length - 1]!);
    const entries = tables.flatMap((t) => t.entries);
    expect([tables[0]!.role, ends.every((e) => e.end && tables.some((t) => t.role === e.region)), entries.some((e) => e.int), entries.some((e) => e.stop)])
      .toEqual(['buf0', true, true, true]);
  });

  test('the PMI timeline has every PMI the run counted, each handled after it was raised, with the branch the handler noted', () => {
    const d = run(SUITE.passing.id).detail!;
    const pmis = d.pmi.pmis;
    expect([d.pmi.count, pmis.every((p) => p.handled !== null && p.handled >= p.raised), pmis.every((p) => p.branch === 'grow' || p.branch === 'chain'), pmis.every((p) => p.topa)])
      .toEqual([d.figures.pmis, true, true, true]);
  });

  test('a PMI a platform top half acknowledged is handled at the unmask after its handler, with its branch and bytes', () => {
    const d = run(SUITE.topHalf.id).detail!;
    const pmis = d.pmi.pmis;
    expect([pmis.length, pmis.every((p) => p.handled !== null && p.handled > p.raised && p.branch !== null && p.bytes !== null)]).toEqual([d.figures.pmisHandled, true]);
  });

  test('the bytes of each PMI are the pointer\'s advance: positive, and together no more than the run collected (lossless)', () => {
    const d = run(SUITE.passing.id).detail!;
    const bytes = d.pmi.pmis.map((p) => p.bytes);
    const sum = bytes.reduce<number>((n, b) => n + (b ?? 0), 0);
    expect([bytes.every((b) => b !== null && b > 0), sum <= d.losses!.collected, sum > d.losses!.collected / 2, d.losses!.lost]).toEqual([true, true, true, []]);
  });

  test('the region fill draws regions of the layout, never above their size, some of them full', () => {
    const d = run(SUITE.passing.id).detail!;
    const regions = new Set(d.topa.tables.flatMap((t) => t.entries.filter((e) => !e.end).map((e) => e.region)));
    const f = d.fill!;
    expect([f.mode, f.series.every((s) => regions.has(s.region)), f.series.every((s) => s.points.every(([, b]) => b !== null && b <= s.size)),
      f.series.some((s) => s.points.some(([, b]) => b === s.size))]).toEqual(['topa', true, true, true]);
  });

  test('a failed run\'s excerpt is centred on its first PMI and holds the lines around it', () => {
    const d = run(SUITE.failing.id).detail!;
    const x = d.excerpt!;
    expect([x.at, x.lines.some((l) => l.n === x.at && l.text.includes('"op":"pmi"')), x.lines.length > 10]).toEqual([d.pmi.pmis[0]!.line, true, true]);
  });

  test('a passing run has no excerpt', () => {
    expect(run(SUITE.passing.id).detail!.excerpt).toBeUndefined();
  });

  test('anchors carry the seed when a suite has several, and stay unique', () => {
    const k = { scenario: 'a', target: 'sim', profile: 'skylake' };
    expect(anchorsOf([{ ...k, seed: 1 }, { ...k, seed: 2 }, { ...k, seed: 2 }])).toEqual(['run-a-sim-skylake-seed1', 'run-a-sim-skylake-seed2', 'run-a-sim-skylake-seed2-2']);
  });
});

describe('damaged run directories', () => {
  let damaged = '';
  const dir = (s: { scenario: string; profile: string }): string => join(damaged, s.scenario, s.profile);
  beforeAll(async () => {
    damaged = join(root, 'damaged');
    await cp(suite, damaged, { recursive: true });
    await rm(join(dir(SUITE.passing), 'transcript.jsonl'));
    await writeFile(join(dir(SUITE.passing), 'losses.json'), '{"collected": "many"');
    await writeFile(join(dir(SUITE.failing), 'transcript.jsonl'), `not json\n${await readFile(join(dir(SUITE.failing), 'transcript.jsonl'), 'utf8')}[1,2]\n`);
    const r = JSON.parse(await readFile(join(dir(SUITE.failing), 'result.json'), 'utf8')) as ResultJson;
    await writeFile(join(dir(SUITE.failing), 'result.json'), JSON.stringify({ ...r, reason: '</script><script>alert(1)</script>' }));
    await writeFile(join(damaged, 'topa-grow', 'icelake', 'result.json'), '{"verdict": "maybe"}');
  });

  test('each damaged file is listed in its run\'s section as missing or malformed, and the report is still written', async () => {
    const v = await suiteView(damaged);
    const problems = (id: string) => v.runs.find((r) => r.summary.id === id)!.detail!.problems.map((p) => `${p.file} ${p.problem}`);
    expect([problems(SUITE.passing.id), problems(SUITE.failing.id), problems('run-topa-grow-sim-icelake')]).toEqual([
      ['transcript.jsonl missing', 'losses.json malformed'], ['transcript.jsonl malformed'], ['result.json malformed'],
    ]);
    expect(await writeSuiteReport(damaged)).toBe(join(damaged, 'report.html'));
  });

  test('text from a run cannot end the page\'s elements (a reason holding </script>)', async () => {
    const html = await readFile(await writeSuiteReport(damaged), 'utf8');
    expect([html.includes('<script>alert(1)'), html.includes('&lt;/script&gt;&lt;script&gt;alert(1)')]).toEqual([false, true]);
  });

  test('without results.jsonl the runs come from their directories, and an unreadable result.json shows as missing', async () => {
    const bare = join(root, 'bare');
    await cp(damaged, bare, { recursive: true });
    await rm(join(bare, 'results.jsonl'));
    const v = await suiteView(bare);
    const icelake = v.runs.find((r) => r.summary.scenario === 'topa-grow' && r.summary.profile === 'icelake')!;
    expect([v.runs.length, v.problems.map((p) => `${p.file} ${p.problem}`), icelake.summary.verdict]).toEqual([results.length, ['results.jsonl missing'], 'missing']);
  });
});

describe('a corrupt run (the memory oracle\'s verdict)', () => {
  let corrupt = '', v: SuiteView;
  beforeAll(async () => {
    corrupt = join(root, 'corrupt');
    await corruptCopy(suite, corrupt);
    v = await suiteView(corrupt);
  });
  const section = (): RunView => v.runs.find((r) => r.summary.id === SUITE.failing.id)!;

  test('its section holds the events of result.json and the leaked buffers', () => {
    const s = section();
    expect([s.summary.verdict, s.detail!.corrupt, s.detail!.leaked, s.detail!.problems]).toEqual(['corrupt', [CORRUPT.event], [CORRUPT.leaked], []]);
  });

  test('its excerpt is centred on the first corrupt line, not on the first PMI', () => {
    const d = section().detail!;
    const x = d.excerpt!;
    expect([d.pmi.pmis[0]!.line > CORRUPT.line, x.at, x.why, x.lines.find((l) => l.n === x.at)?.text.includes('"op":"corrupt"')])
      .toEqual([true, CORRUPT.line, expect.stringContaining('corrupt line') as unknown as string, true]);
  });

  test('the page: its matrix cell is corrupt, the header counts it apart, and the not-passed list names it first', async () => {
    const html = await readFile(await writeSuiteReport(corrupt), 'utf8');
    const notPassed = /<section id="failures">.*?<\/section>/s.exec(html)?.[0] ?? '';
    expect([
      html.includes(`<td class="v-corrupt" title="${SUITE.failing.scenario} on sim:${SUITE.failing.profile}: corrupt`),
      html.includes('<span class="badge v-corrupt">1 corrupt</span>'),
      /<li><a href="#([^"]+)">/.exec(notPassed)?.[1],
      html.includes(`<details class="run v-corrupt" id="${SUITE.failing.id}">`),
    ]).toEqual([true, true, SUITE.failing.id, true]);
  });
});

describe('ptlab report', () => {
  test('writes SUITE/report.html and prints its path: exit 0', async () => {
    const r = await ptlab('report', suite);
    const html = await readFile(join(suite, 'report.html'), 'utf8');
    expect([r.code, r.out, html.startsWith('<!doctype html>'), html.includes(`id="${SUITE.failing.id}"`)]).toEqual([0, `report: ${join(suite, 'report.html')}`, true, true]);
  });

  test('--out FILE writes the page there', async () => {
    const out = join(root, 'elsewhere', 'r.html');
    await mkdir(join(root, 'elsewhere'), { recursive: true });
    expect([(await ptlab('report', suite, '--out', out)).code, (await readFile(out, 'utf8')).length > 10_000]).toEqual([0, true]);
  });

  test.for([
    { what: 'a directory that does not exist', args: () => [join(root, 'nope')] },
    { what: 'an empty directory', args: () => [root.length > 0 ? join(root, 'empty') : ''] },
    { what: 'no directory', args: () => [] },
    { what: 'an unknown option', args: () => [suite, '--pdf'] },
  ])('$what: exit 2', async ({ args }) => {
    await mkdir(join(root, 'empty'), { recursive: true });
    const r = await ptlab('report', ...args());
    expect([r.code, r.err.startsWith('ptlab report: ')]).toEqual([2, true]);
  });

  test('a missing chart library is a ReportError that says which package to install', async () => {
    // From a directory no node_modules above holds (not under the tmp directory: another project may keep one there).
    const e = await loadChartLibrary(pathToFileURL('/ptlab-no-such-dir/x.js').href).catch((x: unknown) => x);
    expect([e instanceof ReportError && e.problem, (e as Error).message]).toEqual(['chart-library-missing', expect.stringMatching(/npm package 'uplot'.*npm ci/)]);
  });
});

describe('a suite of several hosts (ptlab run --hosts: OUT/<host>/ each, OUT/results.jsonl with a host key)', () => {
  let hosts = '';
  beforeAll(async () => {
    hosts = join(root, 'hosts');
    const lines: string[] = [];
    for (const h of ['lab-a', 'lab-b']) {
      await cp(suite, join(hosts, h), { recursive: true });
      for (const l of (await readFile(join(suite, 'results.jsonl'), 'utf8')).split('\n').filter(Boolean)) lines.push(`{"host":"${h}",${l.slice(1)}`);
    }
    await writeFile(join(hosts, 'results.jsonl'), `${lines.join('\n')}\n`);
  });

  test('each run appears once per host, joined with its directory under the host', async () => {
    const v = await suiteView(hosts);
    expect([v.runs.length, v.runs.every((r) => r.summary.host !== undefined && r.summary.dir?.startsWith(r.summary.host)), new Set(v.runs.map((r) => r.summary.id)).size])
      .toEqual([2 * results.length, true, 2 * results.length]);
  });

  test('the matrix has a header row of hosts over the profile columns', async () => {
    const html = await readFile(await writeSuiteReport(hosts), 'utf8');
    expect([html.match(/<th colspan="6" class="host">lab-[ab]<\/th>/g)?.length, html.includes('href="#run-lab-b-topa-stop-sim-skylake"')]).toEqual([2, true]);
  });
});
