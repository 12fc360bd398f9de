// `npm run sweep`: the long sweeps that do not belong in CI.
//
//   npm run sweep                          every scenario × profile × seeds 1-200 (ptlab run), failures per 1,000 runs
//   npm run sweep -- --crash-points        the crash-point sweep (docs/design.md "The crash-point sweep"):
//       [--profiles broadwell,full] [--points N] [--modes throw,timeout,abort,drop] [--signals N]
//       [--jobs N] [--out DIR] [--resume]
//
// Without --crash-points the arguments go to `ptlab run` after its own. With it, the scenarios
// are dealt over --jobs processes (default 2), each sweeping its share of the crash points; the
// signal sweep follows; the summary goes to stdout and DIR/crash-points.json; exit 1 when anything
// broke the invariant. Each scenario × profile pair swept is added to DIR/checkpoint.jsonl as it
// ends (crash/checkpoint.ts); --resume keeps the pairs there and sweeps only the rest, so a sweep
// stopped part-way goes on where it stopped (without it the checkpoint is started afresh).
import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crashSweep, mergeSummaries, type CrashPointResult, type CrashSweepSummary } from '../crash/sweep.js';
import { CRASH_MODES, type CrashMode } from '../crash/inject.js';
import { signalSweep, type SignalPoint } from '../crash/signal-sweep.js';
import { SCENARIOS } from '../scenarios/index.js';
import { checkProfile } from '../runner/targets.js';
import { main, type CliIo } from './main.js';

const io: CliIo = { out: (s) => process.stdout.write(`${s}\n`), err: (s) => process.stderr.write(`${s}\n`) };

/** The value after `--name`, or `dflt`. */
function opt(argv: readonly string[], name: string, dflt: string): string {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : dflt;
}

function positiveInt(v: string, name: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a whole number, got '${v}'`);
  return n;
}

/** One process's share: scenarios i, i+n, i+2n, … of the catalogue. */
async function part(argv: readonly string[]): Promise<number> {
  const [i, n] = opt(argv, '--part', '1/1').split('/').map(Number) as [number, number];
  const profiles = opt(argv, '--profiles', 'broadwell,full').split(',').map(checkProfile);
  const modes = opt(argv, '--modes', CRASH_MODES.join(',')).split(',') as CrashMode[];
  const bad = modes.find((m) => !CRASH_MODES.includes(m));
  if (bad) throw new Error(`unknown crash mode '${bad}' (modes: ${CRASH_MODES.join(', ')})`);
  const out = opt(argv, '--out', 'runs/crash-points');
  const scenarios = SCENARIOS.filter((_s, k) => k % n === i - 1);
  const summary = await crashSweep({
    scenarios, profiles, seed: 1, modes, maxPoints: positiveInt(opt(argv, '--points', '1500'), '--points'), out: join(out, `part-${i}`),
    checkpoint: join(out, CHECKPOINT),
    progress: (p) => { if (p.at === 0 || p.violations.length) process.stderr.write(`${lineOf(p)}\n`); },
  });
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  return 0;
}

function lineOf(p: CrashPointResult): string {
  if (p.at === 0) return `crash-points: ${p.scenario} on ${p.profile}: ${p.model?.ops ?? 0} operations`;
  return `crash-points: VIOLATION ${p.violations.join(',')}: ${p.scenario} on ${p.profile}, operation ${p.at}/${p.of} (${p.hit ?? '?'}) ${p.mode}: ${p.verdict}${p.detail ? `: ${p.detail}` : ''}`;
}

/** Runs `argv` as a child process of this entry; resolves with its stdout. */
function child(argv: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [fileURLToPath(import.meta.url), ...argv], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.setEncoding('utf8');
    c.stdout.on('data', (d: string) => { out += d; });
    c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`crash-point part ${argv.join(' ')} exited ${String(code)}`))));
  });
}

/** The checkpoint file of a crash-point sweep, in its --out directory. */
const CHECKPOINT = 'checkpoint.jsonl';

async function crashPoints(argv: readonly string[]): Promise<number> {
  const jobs = Math.max(1, positiveInt(opt(argv, '--jobs', '2'), '--jobs'));
  const out = opt(argv, '--out', 'runs/crash-points');
  await mkdir(out, { recursive: true });
  if (!argv.includes('--resume')) await rm(join(out, CHECKPOINT), { force: true });
  const passOn = argv.filter((a, k) => a !== '--crash-points' && a !== '--resume' && a !== '--jobs' && argv[k - 1] !== '--jobs');
  const t0 = performance.now();
  const texts = await Promise.all(Array.from({ length: jobs }, (_, k) => child(['--crash-part', '--part', `${k + 1}/${jobs}`, ...passOn])));
  const summary = mergeSummaries(texts.map((t) => JSON.parse(t.trim().split('\n').pop()!) as CrashSweepSummary));
  const crashMs = Math.round(performance.now() - t0);
  const signals = positiveInt(opt(argv, '--signals', '200'), '--signals');
  const ptlab = fileURLToPath(new URL('./ptlab.js', import.meta.url));
  const points: SignalPoint[] = signals === 0 ? [] : await signalSweep({
    ptlab, points: signals, spanMs: 12_000, out: join(out, 'signals'), seed: 7,
    progress: (p) => { if (p.problems.length) io.err(`signals: point ${p.n} (${p.signal}${p.twice ? ' twice' : ''} at ${p.afterMs} ms): ${p.problems.join('; ')}`); },
  });
  const bad = points.filter((p) => p.problems.length);
  const report = {
    crashPoints: { ...summary, seconds: Math.round(crashMs / 1000) },
    signals: { points: points.length, stopped: points.filter((p) => p.exitCode === 143 || p.exitCode === 130).length, runsMade: points.reduce((n, p) => n + p.runs, 0), problems: bad },
  };
  await writeFile(join(out, 'crash-points.json'), `${JSON.stringify(report, null, 2)}\n`);
  io.out(`crash points: ${summary.runs} injected runs (${CRASH_MODES.map((m) => `${m} ${summary.byMode[m]}`).join(', ')}) in ${Math.round(crashMs / 1000)} s`);
  io.out(`  corrupt events ${summary.corruptEvents}; TraceEn left on a live link ${summary.traceEnLeft}; on a dropped link ${summary.traceEnLeftDeadLink} (everything leaked there, nothing freed)`);
  io.out(`  allocated but not reported ${summary.unaccountedBytes} bytes; reported leaked ${summary.leakedBytes} bytes; violations ${summary.violations.length}`);
  if (summary.notSwept.length) io.out(`  not swept: ${summary.notSwept.join('; ')}`);
  io.out(`signals: ${points.length} stopped suites (${report.signals.runsMade} runs made), ${bad.length} with a problem`);
  io.out(`details: ${join(out, 'crash-points.json')}`);
  return summary.violations.length === 0 && bad.length === 0 && summary.notSwept.length === 0 ? 0 : 1;
}

const argv = process.argv.slice(2);
const run = argv.includes('--crash-part') ? part(argv)
  : argv.includes('--crash-points') ? crashPoints(argv)
  : main(['run', '--all', '--seeds', '1-200', '--out', 'runs/sweep', '--force', ...argv], io);
run.then((code) => { process.exitCode = code; }, (e: unknown) => { io.err(`sweep: ${e instanceof Error ? e.message : String(e)}`); process.exitCode = 2; });
