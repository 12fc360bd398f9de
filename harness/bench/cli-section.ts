// What a user runs, measured as a user runs it: the `ptlab` command as a whole
// process against a libipt-based C tool that writes the same output (test/libipt/ptjson.c with
// --stats or --text, ptjson, ptflow), each timed end to end (start,
// read, decode, write), best of three, once writing to a file and once through a pipe. The
// outputs are compared byte for byte (--stats: without ptlab's timing lines) before any time
// counts. The ratio is the C tool's time over ptlab's: above 1, ptlab is faster. Every case runs
// on each trace shape users have (shapes.ts): the generator's, a fuzzer's PAD-heavy capture, a perf
// capture with timing.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchContext, BenchSection } from './sections.js';
import { simTrace } from './model-sections.js';
import { padded, shapedStream, TRACE_SHAPES, type TraceShape } from './shapes.js';

/** The targets of the whole-process benchmark: ptlab's speed over the baseline's. */
export const CLI_TARGETS = { 'dump --stats': 2.0, 'dump --json': 1.5, 'dump (text)': 1.0, 'flow --json': 1.0 } as const;
type CaseName = keyof typeof CLI_TARGETS;

interface Case {
  readonly name: CaseName;
  readonly shape: TraceShape;
  /** ptlab's arguments, and the baseline's command line. */
  readonly ptlab: readonly string[];
  readonly baseline: readonly string[];
  /** Whether ptlab's output file says what the baseline's says (--stats: without ptlab's timing lines). */
  readonly same: (ours: string, theirs: string) => boolean;
}

/** SHA-256 of a file, read in pieces (packet JSON of a big stream is gigabytes). */
function sha256(path: string): string {
  const h = createHash('sha256'), buf = Buffer.alloc(1 << 20), fd = openSync(path, 'r');
  try {
    for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) h.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return h.digest('hex');
}

/** Small text outputs, compared by `cmp` on their text. */
const textOf = (cmp: (ours: string, theirs: string) => boolean) => (ours: string, theirs: string): boolean =>
  cmp(readFileSync(ours, 'latin1'), readFileSync(theirs, 'latin1'));

/**
 * Flow lines agree when equal, or when they differ only in a jcc's `taken` where the baseline says
 * false: libipt's instruction flow has no taken bit, so ptflow infers it from the next IP and calls
 * a taken `jcc +0` (its target is the next instruction) not taken; ptlab reports the TNT bit.
 */
function sameFlow(ours: string, theirs: string): boolean {
  if (ours === theirs) return true;
  const a = ours.split('\n'), b = theirs.split('\n');
  return a.length === b.length && a.every((l, i) => l === b[i] || l.replace('"taken":true', '"taken":false') === b[i]);
}

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const RUNS = 3;
/** The dump inputs: 128 MiB for --stats, 32 MiB for --json (a 2 GB output); 4 with --quick, where start-up dominates. */
const STATS_MIB = (quick: boolean): number => (quick ? 4 : 128);
const JSON_MIB = (quick: boolean): number => (quick ? 4 : 32);

/** Seconds of the best of RUNS runs of `argv` with stdout to `file`, or through a pipe into `cat > /dev/null`. */
function timed(argv: readonly string[], sink: 'file' | 'pipe', file: string): number {
  let best = Infinity;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    if (sink === 'file') {
      const fd = openSync(file, 'w');
      try {
        const r = spawnSync(argv[0]!, argv.slice(1), { stdio: ['ignore', fd, 'inherit'] });
        if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status ?? r.signal}`);
      } finally {
        closeSync(fd);
      }
    } else {
      const r = spawnSync('bash', ['-o', 'pipefail', '-c', '"$@" | cat > /dev/null', 'bench', ...argv], { stdio: ['ignore', 'ignore', 'inherit'] });
      if (r.status !== 0) throw new Error(`${argv.join(' ')} | cat exited ${r.status ?? r.signal}`);
    }
    best = Math.min(best, (performance.now() - t0) / 1000);
  }
  return best;
}

/** The report lines and verdict of every case (`check`: a missed target fails the section). */
export const cliSection: BenchSection = {
  name: 'cli',
  async run({ quick, tools, check }: BenchContext) {
    const dir = mkdtempSync(join(tmpdir(), 'ptlab-bench-cli-'));
    try {
      const node = process.execPath;
      const cases: Case[] = [];
      // Flow needs the code: sim traces of a generated workload, shaped as the captures are (the
      // fuzzer's: PAD runs added; perf's: timing on). Seed 11 with a bound of 20 M branches runs
      // 8.7 M of them: a trace of megabytes, as a lab's.
      const branches = quick ? 100_000 : 20_000_000;
      const plain = await simTrace(branches, 11), timing = await simTrace(branches, 11, { timing: true });
      for (const shape of TRACE_SHAPES) {
        const stream = join(dir, `${shape}.pt`), big = join(dir, `${shape}-big.pt`);
        writeFileSync(stream, shapedStream(shape, JSON_MIB(quick) << 20));
        writeFileSync(big, shapedStream(shape, STATS_MIB(quick) << 20));
        cases.push(
          { name: 'dump --stats', shape, ptlab: ['dump', big, '--stats'], baseline: [tools.ptjson, '--stats', big], same: textOf((o, t) => o.split('\n').filter((l) => !/^(seconds|MB\/s|Mpackets\/s) /.test(l)).join('\n') === t) },
          { name: 'dump --json', shape, ptlab: ['dump', stream, '--json'], baseline: [tools.ptjson, stream], same: (o, t) => sha256(o) === sha256(t) },
        );
        if (shape === 'generator') cases.push({ name: 'dump (text)', shape, ptlab: ['dump', stream], baseline: [tools.ptjson, '--text', stream], same: (o, t) => sha256(o) === sha256(t) });
        const sim = shape === 'perf' ? timing : plain;
        const tracePath = join(dir, `${shape}-flow.pt`), imagePath = join(dir, `${shape}-image.bin`);
        writeFileSync(tracePath, shape === 'fuzzer' ? padded(sim.trace) : sim.trace);
        writeFileSync(imagePath, sim.w.image);
        const base = `0x${sim.w.base.toString(16)}`;
        cases.push({ name: 'flow --json', shape, ptlab: ['flow', tracePath, '--image', `${imagePath}@${base}`, '--json'], baseline: [tools.ptflow, tracePath, imagePath, base], same: textOf(sameFlow) });
      }
      const lines = [
        `whole processes, best of ${RUNS}, on each trace shape (shapes.ts): dump --stats over ${STATS_MIB(quick)} MiB, dump --json over ${JSON_MIB(quick)} MiB, flow over a sim trace (fuzzer: PAD runs added; perf: timing on); ratio = baseline time / ptlab time`,
        `${'command'.padEnd(14)}${'shape'.padEnd(10)}${'sink'.padEnd(6)}${'ptlab s'.padStart(9)}${'libipt s'.padStart(10)}${'ratio'.padStart(8)}  target`,
      ];
      let ok = true;
      for (const c of cases) {
        const ours = join(dir, 'ours.out'), theirs = join(dir, 'theirs.out');
        const pt = [node, CLI, ...c.ptlab];
        const tPtlab = { file: timed(pt, 'file', ours), pipe: timed(pt, 'pipe', ours) };
        const tBase = { file: timed(c.baseline, 'file', theirs), pipe: timed(c.baseline, 'pipe', theirs) };
        const same = c.same(ours, theirs);
        if (!same) { ok = false; lines.push(`MISMATCH ${c.name} on ${c.shape}: ptlab's output differs from the baseline's`); }
        for (const sink of ['file', 'pipe'] as const) {
          const ratio = tBase[sink] / tPtlab[sink], target = CLI_TARGETS[c.name];
          const met = ratio >= target;
          if (check && !met) ok = false;
          lines.push(`${c.name.padEnd(14)}${c.shape.padEnd(10)}${sink.padEnd(6)}${tPtlab[sink].toFixed(3).padStart(9)}${tBase[sink].toFixed(3).padStart(10)}${`${ratio.toFixed(2)}x`.padStart(8)}  >= ${target.toFixed(1)}x${met ? '' : ' NOT MET'}`);
        }
      }
      return { lines, ok };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
