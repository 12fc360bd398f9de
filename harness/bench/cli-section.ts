// What a user runs, measured as a user runs it: the `ptlab` command as a whole
// process against a libipt-based C tool that writes the same output (test/libipt/ptjson.c with
// --stats or --text, ptjson, ptflow), each timed end to end (start,
// read, decode, write), best of three, once writing to a file and once through a pipe. The
// outputs are compared byte for byte (--stats: without ptlab's timing lines) before any time
// counts. The ratio is the C tool's time over ptlab's: above 1, ptlab is faster.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchContext, BenchSection } from './sections.js';
import { simTrace } from './model-sections.js';
import { benchStream } from './stream.js';

/** The targets of the whole-process benchmark: ptlab's speed over the baseline's. */
export const CLI_TARGETS = { 'dump --stats': 2.0, 'dump --json': 1.5, 'dump (text)': 1.0, 'flow --json': 1.0 } as const;
type CaseName = keyof typeof CLI_TARGETS;

interface Case {
  readonly name: CaseName;
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
      const stream = join(dir, 'stream.pt'), big = join(dir, 'big.pt');
      writeFileSync(stream, benchStream(JSON_MIB(quick) << 20));
      writeFileSync(big, benchStream(STATS_MIB(quick) << 20));
      // Seed 11 with a bound of 20 M branches runs 8.7 M of them: a trace of megabytes, as a lab's.
      const { trace, w } = await simTrace(quick ? 100_000 : 20_000_000, 11);
      const tracePath = join(dir, 'trace.pt'), imagePath = join(dir, 'image.bin');
      writeFileSync(tracePath, trace);
      writeFileSync(imagePath, w.image);
      const base = `0x${w.base.toString(16)}`;
      const node = process.execPath;
      const cases: Case[] = [
        { name: 'dump --stats', ptlab: ['dump', big, '--stats'], baseline: [tools.ptjson, '--stats', big], same: textOf((o, t) => o.split('\n').filter((l) => !/^(seconds|MB\/s|Mpackets\/s) /.test(l)).join('\n') === t) },
        { name: 'dump --json', ptlab: ['dump', stream, '--json'], baseline: [tools.ptjson, stream], same: (o, t) => sha256(o) === sha256(t) },
        { name: 'dump (text)', ptlab: ['dump', stream], baseline: [tools.ptjson, '--text', stream], same: (o, t) => sha256(o) === sha256(t) },
        { name: 'flow --json', ptlab: ['flow', tracePath, '--image', `${imagePath}@${base}`, '--json'], baseline: [tools.ptflow, tracePath, imagePath, base], same: textOf(sameFlow) },
      ];
      const lines = [
        `whole processes, best of ${RUNS}: dump --stats over ${STATS_MIB(quick)} MiB and dump --json over ${JSON_MIB(quick)} MiB of stream.ts's stream, flow over a sim trace of ${trace.length} bytes; ratio = baseline time / ptlab time`,
        `${'command'.padEnd(14)}${'sink'.padEnd(6)}${'ptlab s'.padStart(9)}${'libipt s'.padStart(10)}${'ratio'.padStart(8)}  target`,
      ];
      let ok = true;
      for (const c of cases) {
        const ours = join(dir, 'ours.out'), theirs = join(dir, 'theirs.out');
        const pt = [node, CLI, ...c.ptlab];
        const tPtlab = { file: timed(pt, 'file', ours), pipe: timed(pt, 'pipe', ours) };
        const tBase = { file: timed(c.baseline, 'file', theirs), pipe: timed(c.baseline, 'pipe', theirs) };
        const same = c.same(ours, theirs);
        if (!same) { ok = false; lines.push(`MISMATCH ${c.name}: ptlab's output differs from the baseline's`); }
        for (const sink of ['file', 'pipe'] as const) {
          const ratio = tBase[sink] / tPtlab[sink], target = CLI_TARGETS[c.name];
          const met = ratio >= target;
          if (check && !met) ok = false;
          lines.push(`${c.name.padEnd(14)}${sink.padEnd(6)}${tPtlab[sink].toFixed(3).padStart(9)}${tBase[sink].toFixed(3).padStart(10)}${`${ratio.toFixed(2)}x`.padStart(8)}  >= ${target.toFixed(1)}x${met ? '' : ' NOT MET'}`);
        }
      }
      return { lines, ok };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
