// The signal half of the crash-point sweep (docs/design.md "The crash-point sweep"): `ptlab run
// --all` as a whole process, stopped by SIGTERM (every fourth time SIGINT) at a random moment, and
// at every other point stopped again a moment later (the second signal stops the target at once).
// Each stopped suite is then held to the invariant from its own files: no `corrupt` verdict, no run
// whose model was left tracing or holding memory it did not report as leaked, a junit.xml that says
// the suite is incomplete (or complete, when the signal came after the end), the signal's exit
// status, and no staging directory left behind.
import { spawn } from 'node:child_process';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ResultJson } from '../rundir/result.js';
import { Rng } from '../sim/workload/prng.js';

/** One stopped suite. */
export interface SignalPoint {
  readonly n: number;
  readonly signal: 'SIGTERM' | 'SIGINT';
  readonly afterMs: number;
  readonly twice: boolean;
  readonly exitCode: number | null;
  readonly runs: number;
  readonly problems: readonly string[];
}

export interface SignalSweepPlan {
  /** The built ptlab entry (dist/harness/cli/ptlab.js). */
  readonly ptlab: string;
  readonly points: number;
  /** Signals land in [0, spanMs): about the length of one `run --all`. */
  readonly spanMs: number;
  readonly out: string;
  /** Seed of the moments chosen (recorded in the summary). */
  readonly seed: number;
  readonly progress?: (p: SignalPoint) => void;
}

const EXIT_OF = { SIGTERM: 143, SIGINT: 130 } as const;

/** Every directory under `dir` whose name marks a staging directory (harness/rundir/stage.ts `stage`). */
async function stagingLeft(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      if (!e.isDirectory()) continue;
      if (e.name.includes('.partial-')) out.push(join(d, e.name));
      else await walk(join(d, e.name));
    }
  };
  await walk(dir);
  return out;
}

/** The invariant, read from one stopped suite's files. */
async function problemsOf(dir: string, p: { signal: 'SIGTERM' | 'SIGINT'; exitCode: number | null }): Promise<{ runs: number; problems: string[] }> {
  const problems: string[] = [];
  const index = await readFile(join(dir, 'results.jsonl'), 'utf8').catch(() => undefined);
  const junit = await readFile(join(dir, 'junit.xml'), 'utf8').catch(() => undefined);
  if (junit === undefined) problems.push('no junit.xml');
  if (index === undefined) problems.push('no results.jsonl');
  const results = (index ?? '').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as ResultJson);
  const complete = junit !== undefined && !junit.includes('ptlab.incomplete');
  if (p.exitCode !== EXIT_OF[p.signal] && !(complete && (p.exitCode === 0 || p.exitCode === 1))) {
    problems.push(`exit status ${String(p.exitCode)}, not ${EXIT_OF[p.signal]}`);
  }
  for (const r of results) {
    const at = `${r.scenario}/${r.profile}`;
    if (r.verdict === 'corrupt') problems.push(`${at}: corrupt: ${r.reason ?? ''}`);
    if (r.figures.modelTraceEnAfter !== undefined) problems.push(`${at}: the model was left tracing on CPU ${String(r.figures.modelTraceEnAfter)}`);
    const leaked = (r.leaked ?? []).reduce((n, b) => n + b.size, 0);
    const held = Number(r.figures.modelAllocatedAfter ?? 0);
    if (held > leaked) problems.push(`${at}: the model still held ${held} bytes, ${leaked} reported leaked`);
  }
  for (const s of await stagingLeft(dir)) problems.push(`staging directory left: ${s}`);
  return { runs: results.length, problems };
}

/** Stops `ptlab run --all` at `plan.points` random moments; returns each point. */
export async function signalSweep(plan: SignalSweepPlan): Promise<SignalPoint[]> {
  const rng = new Rng(plan.seed);
  const next = (): number => rng.u32() / 0x1_0000_0000;
  const out: SignalPoint[] = [];
  for (let n = 1; n <= plan.points; n++) {
    const signal = n % 4 === 0 ? 'SIGINT' : 'SIGTERM';
    const afterMs = Math.round(next() * plan.spanMs);
    const twice = n % 2 === 0;
    const dir = join(plan.out, `signal-${n}`);
    const child = spawn(process.execPath, [plan.ptlab, 'run', '--all', '--out', dir, '--force'], { stdio: ['ignore', 'ignore', 'ignore'] });
    // Killed by the signal itself (it came before ptlab's handlers were in place): the shell's 128 + n.
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code, sig) => resolve(code ?? (sig === 'SIGTERM' ? 143 : sig === 'SIGINT' ? 130 : null))));
    const timer = setTimeout(() => {
      child.kill(signal);
      if (twice) setTimeout(() => child.kill(signal), 50 + Math.round(next() * 450)).unref();
    }, afterMs);
    const exitCode = await exited;
    clearTimeout(timer);
    const seen = await stat(dir).then(() => problemsOf(dir, { signal, exitCode }), () => ({ runs: 0, problems: [] as string[] }));
    const point: SignalPoint = { n, signal, afterMs, twice, exitCode, runs: seen.runs, problems: seen.problems };
    out.push(point);
    plan.progress?.(point);
    if (seen.problems.length === 0) await rm(dir, { recursive: true, force: true });
  }
  return out;
}
