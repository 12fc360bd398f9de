#!/usr/bin/env node
// `npm run mutation [-- scenarios|vitest]` (issue 9 item 7): StrykerJS mutates the driver's PMI,
// ToPA, context-switch, programming and collection code and reports two scores — the scenario
// suite alone (`ptlab run --all` on the sim: the only check a lab has on real hardware) and the
// whole vitest suite — then lists the mutants the scenario suite lets survive. The reports go to
// build/mutation/{scenarios,vitest}.json and build/mutation/summary.md. Not part of CI: it takes
// about an hour on two cores.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const RUNS = { scenarios: 'the scenario suite alone (ptlab run --all, sim)', vitest: 'the whole vitest suite' };
const asked = process.argv.slice(2);
for (const a of asked) {
  if (!(a in RUNS)) { console.error(`npm run mutation: unknown run '${a}' (runs: ${Object.keys(RUNS).join(', ')})`); process.exit(2); }
}
const runs = asked.length ? asked : Object.keys(RUNS);
const dir = join('build', 'mutation');
mkdirSync(dir, { recursive: true });

for (const name of runs) {
  console.log(`\n== mutation: ${RUNS[name]} ==`);
  const r = spawnSync('npx', ['stryker', 'run', join('test', 'mutation', `${name}.conf.mjs`)], { stdio: 'inherit' });
  if (r.status !== 0) { console.error(`npm run mutation: stryker (${name}) exited ${r.status ?? r.signal}`); process.exit(1); }
}

/** Kill counts of one report, per file and in all. */
function score(report) {
  const files = {};
  const all = { killed: 0, survived: 0, timeout: 0, noCoverage: 0, errors: 0 };
  for (const [path, f] of Object.entries(report.files)) {
    const c = (files[path] = { killed: 0, survived: 0, timeout: 0, noCoverage: 0, errors: 0 });
    for (const m of f.mutants) {
      const k = { Killed: 'killed', Survived: 'survived', Timeout: 'timeout', NoCoverage: 'noCoverage', CompileError: 'errors', RuntimeError: 'errors' }[m.status];
      if (k) { c[k]++; all[k]++; }
    }
  }
  return { files, all };
}
const pct = (c) => {
  const valid = c.killed + c.timeout + c.survived + c.noCoverage;
  return valid === 0 ? '-' : `${((100 * (c.killed + c.timeout)) / valid).toFixed(1)}% (${c.killed + c.timeout}/${valid})`;
};

const reports = Object.fromEntries(Object.keys(RUNS).filter((n) => existsSync(join(dir, `${n}.json`)))
  .map((n) => [n, JSON.parse(readFileSync(join(dir, `${n}.json`), 'utf8'))]));
const scores = Object.fromEntries(Object.entries(reports).map(([n, r]) => [n, score(r)]));
const names = Object.keys(scores);
const paths = [...new Set(names.flatMap((n) => Object.keys(scores[n].files)))].sort();
const lines = ['# Mutation scores', '', `| file | ${names.map((n) => RUNS[n]).join(' | ')} |`, `|---|${names.map(() => '---').join('|')}|`];
for (const p of paths) lines.push(`| ${p} | ${names.map((n) => (scores[n].files[p] ? pct(scores[n].files[p]) : '-')).join(' | ')} |`);
lines.push(`| **all** | ${names.map((n) => `**${pct(scores[n].all)}**`).join(' | ')} |`);
if (reports.scenarios) {
  lines.push('', '## Mutants the scenario suite lets survive', '');
  for (const [path, f] of Object.entries(reports.scenarios.files)) {
    for (const m of f.mutants.filter((x) => x.status === 'Survived' || x.status === 'NoCoverage')) {
      const src = f.source.split('\n')[m.location.start.line - 1]?.trim() ?? '';
      lines.push(`- ${path}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName} → \`${(m.replacement ?? '').replace(/\s+/g, ' ').slice(0, 80)}\` in \`${src.slice(0, 100)}\``);
    }
  }
}
const text = `${lines.join('\n')}\n`;
writeFileSync(join(dir, 'summary.md'), text);
console.log(`\n${text}\n(written to ${join(dir, 'summary.md')})`);
