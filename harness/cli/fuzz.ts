// `npm run fuzz`: the long CLI fuzz (harness/fuzz/). `npm test` runs the matrix once
// (test/cli/cli-fuzz.test.ts); this runs it and then as many random cases as asked.
//
//   npm run fuzz [-- --cases N] [--seed S] [--jobs N] [--work DIR]   (cases run in a new directory under DIR, removed at the end)
//
// Every case that showed a problem is printed with its command, slot, kind and seed (a seed makes
// it again); the summary goes to stdout; exit 1 when any case showed a problem.
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { matrixCases, randomCases, runCampaign, summarize } from '../fuzz/campaign.js';

function opt(argv: readonly string[], name: string, dflt: number): number {
  const i = argv.indexOf(name);
  if (i < 0) return dflt;
  const n = Number(argv[i + 1]);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a whole number, got '${argv[i + 1]}'`);
  return n;
}

async function fuzzMain(argv: readonly string[]): Promise<number> {
  const seed = opt(argv, '--seed', Date.now() % 1_000_000);
  const n = opt(argv, '--cases', 2000);
  const jobs = opt(argv, '--jobs', 2);
  const wi = argv.indexOf('--work');
  const work = wi >= 0 ? argv[wi + 1]! : tmpdir();
  const cli = fileURLToPath(new URL('./ptlab.js', import.meta.url));
  const cases = [...matrixCases(seed), ...randomCases(n, seed + 1_000_000)];
  process.stderr.write(`ptlab fuzz: ${cases.length} cases (the matrix, then ${n} random), seed ${seed}, ${jobs} at a time, in ${work}\n`);
  let done = 0;
  const outcomes = await runCampaign(cli, work, cases, jobs, (o) => {
    done++;
    if (o.problems.length) process.stdout.write(`BAD ${o.command} ${o.slot}=${o.kind} seed ${o.seed}: ${o.problems.join('; ')}\n`);
    if (done % 100 === 0) process.stderr.write(`[${done}/${cases.length}]\n`);
  });
  const s = summarize(outcomes);
  process.stdout.write(`${s.cases} cases: ${s.bad} with a problem, ${s.exit70} exit 70, ${s.hangs} hangs; longest ${s.maxMs} ms, ` +
    `peak RSS ${s.peakRssMiB} MiB; exit statuses ${JSON.stringify(s.byExit)}\n`);
  return s.bad === 0 ? 0 : 1;
}

fuzzMain(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e: unknown) => {
  process.stderr.write(`ptlab fuzz: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 70;
});
