// The suite at scale, measured as a user runs it: the whole `ptlab run`
// process over the full sim matrix (every scenario × every profile, one seed) with --jobs 2
// against --jobs 1 in the same bench run, each writing its run directories to a file tree and its
// progress and --json through pipes; and `ptlab merge` of that matrix cut into 10 shards, against
// `cp -al` of the same shard trees (the least a hand-made merge does). Runs alternate so a busy
// machine slows both sides alike; best of RUNS. Each run's CPU time is printed with its wall time:
// a serial run whose V8 helper threads already keep part of a second core busy can gain at most
// cores ÷ (cores it keeps busy) from --jobs. Beside them, the matrix cut in two shards run as two
// processes at once: what a split of the cells gains on this machine with no coordination at all.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchContext, BenchSection } from './sections.js';

/** The suite's targets: --jobs 2 at least this many times faster than --jobs 1 on two cores; merge of 10 shards under this many seconds. */
export const SUITE_TARGETS = { jobs2: 1.7, mergeSeconds: 2 } as const;

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const RUNS = 2;
const SHARDS = 10;

/** Seconds a command took, failing loudly on a non-zero exit (a crash is not a fast run). */
function timed(cmd: string, args: readonly string[], okCodes: readonly number[] = [0]): number {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
  const s = (performance.now() - t0) / 1000;
  if (!okCodes.includes(r.status ?? -1)) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.toString().slice(-400)}`);
  return s;
}

/** A whole command's wall time and the CPU time (user + system, all its threads) it used, read from bash's `times`. */
interface Cost { readonly wall: number; readonly cpu: number }

/** `timed`, with the CPU the command used: a serial run that keeps more than one core busy has less to gain from --jobs. */
function costOf(cmd: string, args: readonly string[]): Cost {
  return shellCost(quote([cmd, ...args]), `${cmd} ${args.join(' ')}`);
}

/** The commands started at once (each in the background), their wall time together and the CPU they used in all. */
function costAtOnce(cmds: readonly (readonly string[])[]): Cost {
  return shellCost(`${cmds.map((c) => `${quote(c)} & `).join('')}s=0; for p in $(jobs -p); do wait $p || s=$?; done; (exit $s)`, cmds.map((c) => c.join(' ')).join(' & '));
}

function quote(words: readonly string[]): string {
  return words.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
}

/** A bash script's wall time and its children's CPU time from bash's `times`, failing loudly on a non-zero exit. */
function shellCost(script: string, what: string): Cost {
  const t0 = performance.now();
  const r = spawnSync('bash', ['-c', `${script}; s=$?; times >&3; exit $s`], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`${what} exited ${r.status}: ${r.stderr.toString().slice(-400)}`);
  // `times`: the shell's user and system time, then its children's ("0m17.030s 0m2.680s").
  const children = (r.output[3]?.toString() ?? '').trim().split('\n').at(-1) ?? '';
  const secs = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  if (secs.length !== 2) throw new Error(`cannot read the CPU time of ${what} from bash's times: ${JSON.stringify(children)}`);
  return { wall, cpu: secs[0]! + secs[1]! };
}

function matrixArgs(quick: boolean): string[] {
  return quick ? ['topa-grow', 'topa-stop', 'err-reserved-bit', 'xsaves-roundtrip', '--cpu', 'all'] : ['--all', '--cpu', 'all'];
}

export const suiteSection: BenchSection = {
  name: 'suite',
  async run({ quick, check }: BenchContext) {
    const dir = mkdtempSync(join(tmpdir(), 'ptlab-bench-suite-'));
    try {
      const best: Record<1 | 2 | 'split', Cost> = { 1: { wall: Infinity, cpu: 0 }, 2: { wall: Infinity, cpu: 0 }, split: { wall: Infinity, cpu: 0 } };
      for (let k = 0; k < RUNS; k++) {
        for (const jobs of [1, 2] as const) {
          const out = join(dir, `jobs${jobs}-${k}`);
          const c = costOf('node', [CLI, 'run', ...matrixArgs(quick), '--jobs', String(jobs), '--json', '--out', out]);
          if (c.wall < best[jobs].wall) best[jobs] = c;
          rmSync(out, { recursive: true, force: true });
        }
        // What a split with no coordination at all gains on this machine: two whole processes that
        // share nothing (--shard 1/2 and 2/2 started at once), each with its own V8 helper threads.
        const halves = [1, 2].map((i) => join(dir, `half${i}-${k}`));
        const c = costAtOnce(halves.map((out, i) => ['node', CLI, 'run', ...matrixArgs(quick), '--shard', `${i + 1}/2`, '--json', '--out', out]));
        if (c.wall < best.split.wall) best.split = c;
        for (const out of halves) rmSync(out, { recursive: true, force: true });
      }
      const ratio = best[1].wall / best[2].wall;
      const cost = (c: Cost): string => `${c.wall.toFixed(2)} s (CPU ${c.cpu.toFixed(1)} s: ${(c.cpu / c.wall).toFixed(2)} cores busy)`;
      // Ten shards of the same matrix (made with --jobs 2; not timed), then merge against cp -al.
      const shards = Array.from({ length: SHARDS }, (_, i) => join(dir, `shard-${i + 1}`));
      for (const [i, s] of shards.entries()) timed('node', [CLI, 'run', ...matrixArgs(quick), '--shard', `${i + 1}/${SHARDS}`, '--jobs', '2', '--out', s]);
      let merge = Infinity, copy = Infinity;
      for (let k = 0; k < RUNS; k++) {
        const m = join(dir, `merged-${k}`), c = join(dir, `copied-${k}`);
        merge = Math.min(merge, timed('node', [CLI, 'merge', ...shards, '--out', m]));
        copy = Math.min(copy, timed('sh', ['-c', `mkdir -p '${c}' && for s in ${shards.map((x) => `'${x}'`).join(' ')}; do cp -al "$s"/. '${c}'/; done`]));
        rmSync(m, { recursive: true, force: true });
        rmSync(c, { recursive: true, force: true });
      }
      const jobsOk = ratio >= SUITE_TARGETS.jobs2, mergeOk = merge < SUITE_TARGETS.mergeSeconds;
      const lines = [
        `ptlab run ${matrixArgs(quick).join(' ')}: whole process, best of ${RUNS}, alternating`,
        `  --jobs 1 ${cost(best[1])}   --jobs 2 ${cost(best[2])}`,
        `  ratio ${ratio.toFixed(2)}x (target >= ${SUITE_TARGETS.jobs2}x${jobsOk ? '' : ', NOT MET'}); at most ${(availableParallelism() / (best[1].cpu / best[1].wall)).toFixed(2)}x on ${availableParallelism()} cores for a serial run this busy`,
        `  two processes sharing nothing (--shard 1/2 and 2/2 at once) ${cost(best.split)}: ${(best[1].wall / best.split.wall).toFixed(2)}x, what two independent processes gain here (--jobs 2 reaches ${(best.split.wall / best[2].wall * 100).toFixed(0)}% of it)`,
        `ptlab merge of ${SHARDS} shards of that matrix: ${merge.toFixed(2)} s (target < ${SUITE_TARGETS.mergeSeconds} s${mergeOk ? '' : ', NOT MET'}); cp -al of the same trees ${copy.toFixed(2)} s (ratio merge/cp ${(merge / copy).toFixed(2)}x)`,
      ];
      return { lines, ok: !check || (jobsOk && mergeOk) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
