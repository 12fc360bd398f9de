#!/usr/bin/env node
// `npm run mutation [-- scenarios|vitest]`: StrykerJS mutates the driver's PMI,
// ToPA, context-switch, programming and collection code (common.mjs MUTATE) and reports two
// scores:
//   scenarios  the scenario suite alone (`ptlab run --all` on the sim, every profile): the only
//              check a lab has on real hardware;
//   vitest     the whole vitest suite. Only the scenario suite's survivors are run again under
//              vitest (everything the scenarios kill, vitest kills too: it runs them), so this
//              needs scenarios.json from an earlier or the same run.
// Reports: build/mutation/{scenarios,vitest}.json and build/mutation/summary.md (the scores per
// file and every mutant the scenario suite lets survive). Not part of CI: on two cores the
// scenario run takes about an hour.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const RUNS = { scenarios: 'scenario suite alone (ptlab run --all, sim)', vitest: 'whole vitest suite' };
const asked = process.argv.slice(2);
for (const a of asked) {
  if (!(a in RUNS)) { console.error(`npm run mutation: unknown run '${a}' (runs: ${Object.keys(RUNS).join(', ')})`); process.exit(2); }
}
const runs = asked.length ? asked : Object.keys(RUNS);
const dir = join('build', 'mutation');
mkdirSync(dir, { recursive: true });
const reportOf = (name) => (existsSync(join(dir, `${name}.json`)) ? JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')) : undefined);
const SURVIVED = new Set(['Survived', 'NoCoverage']);
const KILLED = new Set(['Killed', 'Timeout']);
const VALID = new Set([...SURVIVED, ...KILLED]);

/** One mutant's identity across two Stryker runs (ids differ between runs). */
const keyOf = (path, m) => `${path}:${m.location.start.line}:${m.location.start.column}:${m.mutatorName}:${m.replacement ?? ''}`;

function stryker(name, env = {}) {
  console.log(`\n== mutation: ${RUNS[name]} ==`);
  const r = spawnSync('npx', ['stryker', 'run', join('test', 'mutation', `${name}.conf.mjs`)], { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) { console.error(`npm run mutation: stryker (${name}) exited ${r.status ?? r.signal}`); process.exit(1); }
}

if (runs.includes('scenarios')) stryker('scenarios');
if (runs.includes('vitest')) {
  const sc = reportOf('scenarios');
  if (!sc) { console.error('npm run mutation: the vitest run needs build/mutation/scenarios.json (run `npm run mutation -- scenarios` first)'); process.exit(2); }
  const ranges = Object.entries(sc.files).flatMap(([path, f]) => f.mutants.filter((m) => SURVIVED.has(m.status))
    .map((m) => `${path}:${m.location.start.line}-${m.location.end.line}`));
  if (ranges.length) stryker('vitest', { PTLAB_MUTATE: [...new Set(ranges)].join(',') });
  else console.log('\n== mutation: the scenario suite killed every mutant; nothing to run under vitest ==');
}

/** Per file and in all: killed (timeouts count as killed) and valid mutants of `judge` over the scenario run's mutants. */
function scores(sc, killedBy) {
  const files = {}, all = { killed: 0, valid: 0 };
  for (const [path, f] of Object.entries(sc.files)) {
    const c = (files[path] = { killed: 0, valid: 0 });
    for (const m of f.mutants) {
      if (!VALID.has(m.status)) continue;
      const k = killedBy(path, m) ? 1 : 0;
      c.valid++; c.killed += k; all.valid++; all.killed += k;
    }
  }
  return { files, all };
}
const pct = (c) => (c.valid === 0 ? '-' : `${((100 * c.killed) / c.valid).toFixed(1)}% (${c.killed}/${c.valid})`);

const sc = reportOf('scenarios');
if (!sc) process.exit(0);
const vt = reportOf('vitest');
const vitestKilled = new Set(vt ? Object.entries(vt.files).flatMap(([path, f]) => f.mutants.filter((m) => KILLED.has(m.status)).map((m) => keyOf(path, m))) : []);
const cols = [['scenario suite alone (ptlab run --all, sim)', scores(sc, (_p, m) => KILLED.has(m.status))]];
if (vt) cols.push(['whole vitest suite', scores(sc, (p, m) => KILLED.has(m.status) || vitestKilled.has(keyOf(p, m)))]);
const lines = ['# Mutation scores', '', `| file | ${cols.map(([n]) => n).join(' | ')} |`, `|---|${cols.map(() => '---').join('|')}|`];
for (const p of Object.keys(sc.files).sort()) lines.push(`| ${p} | ${cols.map(([, s]) => pct(s.files[p])).join(' | ')} |`);
lines.push(`| **all** | ${cols.map(([, s]) => `**${pct(s.all)}**`).join(' | ')} |`, '', '## Mutants the scenario suite lets survive', '');
for (const [path, f] of Object.entries(sc.files)) {
  const src = f.source.split('\n');
  for (const m of f.mutants.filter((x) => SURVIVED.has(x.status))) {
    const at = `${path}:${m.location.start.line}:${m.location.start.column}`;
    const byVitest = vt ? (vitestKilled.has(keyOf(path, m)) ? ' (vitest kills it)' : ' (vitest too lets it survive)') : '';
    lines.push(`- ${at} ${m.mutatorName} → \`${(m.replacement ?? '').replace(/\s+/g, ' ').slice(0, 80)}\` in \`${(src[m.location.start.line - 1] ?? '').trim().slice(0, 110)}\`${byVitest}`);
  }
}
const text = `${lines.join('\n')}\n`;
writeFileSync(join(dir, 'summary.md'), text);
console.log(`\n${text}\n(written to ${join(dir, 'summary.md')})`);
