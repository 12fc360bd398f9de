// Progress of `ptlab run` on stderr (harness/cli/progress.ts): on a terminal one
// live line redrawn after every run (runs done of the total, failures so far, time left), failed
// runs kept above it; elsewhere plain lines, bounded whatever the suite's size — the first run,
// one line each twentieth of the runs or every 30 s, the last, and every failure. Driven with a
// fake terminal, then through a real pipe from dist/.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { duration, PLAIN_EVERY_MS, suiteProgress, type ProgressOut } from '../../harness/cli/progress.js';
import type { ResultJson } from '../../harness/rundir/result.js';
import { tmpRoot } from '../scenarios/tmp.js';

const run = (over: Partial<ResultJson> = {}): ResultJson => ({ scenario: 's', target: 'sim', profile: 'skylake', seed: 1, verdict: 'pass', expectations: [], figures: {}, ...over });

/** A stderr that records what it got: `status` present makes it a terminal (CliIo.status is set only when stderr is a TTY). */
function fakeStderr(tty: boolean): ProgressOut & { events: string[] } {
  const events: string[] = [];
  return { events, line: (s) => events.push(`line ${s}`), ...(tty ? { status: (s: string) => events.push(`live ${s}`) } : {}) };
}

/** Feeds `n` runs of `ms` each (the ones in `failing` fail) through a progress, the clock advancing `tick` ms per run. */
function feed(out: ProgressOut, n: number, o: { ms?: number; tick?: number; failing?: number[]; sweep?: boolean; perSeed?: number } = {}): void {
  let clock = 0;
  const p = suiteProgress(out, { sweep: o.sweep ?? false, now: () => clock });
  for (let i = 1; i <= n; i++) {
    clock += o.tick ?? 0;
    const perSeed = o.perSeed ?? n;
    const r = o.failing?.includes(i) ? run({ verdict: 'fail', reason: 'x: y', seed: Math.ceil(i / perSeed) }) : run({ seed: Math.ceil(i / perSeed) });
    p(r, i, n, o.ms ?? 100, i % perSeed === 0 || i === n);
  }
}

describe('on a terminal', () => {
  test('every run redraws the live line: runs done of the total, failures so far, the time left', () => {
    const err = fakeStderr(true);
    feed(err, 3, { ms: 2000 });
    expect(err.events).toEqual([
      'live [1/3, 0 failed, ETA 4s] PASS s (sim:skylake) 2000 ms',
      'live [2/3, 0 failed, ETA 2s] PASS s (sim:skylake) 2000 ms',
      'live [3/3, 0 failed] PASS s (sim:skylake) 2000 ms',
    ]);
  });

  test('a failed run clears the live line, keeps its own line, and the live line counts it', () => {
    const err = fakeStderr(true);
    feed(err, 3, { ms: 1000, failing: [2] });
    expect(err.events.slice(1)).toEqual([
      'live ', 'line [2/3] FAIL s (sim:skylake) 1000 ms  x: y', 'live [2/3, 1 failed, ETA 1s] FAIL s (sim:skylake) 1000 ms  x: y',
      'live [3/3, 1 failed] PASS s (sim:skylake) 1000 ms',
    ]);
  });
});

describe('a corrupt run', () => {
  test('keeps its line above the live line, and the live line counts it apart from the failures', () => {
    const err = fakeStderr(true);
    const p = suiteProgress(err, { sweep: false, now: () => 0 });
    p(run({ verdict: 'corrupt', reason: 'PT reached memory the driver does not own (trace-write): x' }), 1, 2, 1000, false);
    p(run({ verdict: 'fail', reason: 'x: y' }), 2, 2, 1000, true);
    expect(err.events).toEqual([
      'live ', 'line [1/2] CORRUPT s (sim:skylake) 1000 ms  PT reached memory the driver does not own (trace-write): x',
      'live [1/2, 0 failed, 1 corrupt, ETA 1s] CORRUPT s (sim:skylake) 1000 ms  PT reached memory the driver does not own (trace-write): x',
      'live ', 'line [2/2] FAIL s (sim:skylake) 1000 ms  x: y', 'live [2/2, 1 failed, 1 corrupt] FAIL s (sim:skylake) 1000 ms  x: y',
    ]);
  });
});

describe('not on a terminal', () => {
  test('56,000 fast runs print the first, about one line per twentieth, and the last: no live line, never a line per run', () => {
    const err = fakeStderr(false);
    feed(err, 56_000, { ms: 50 });
    const lines = err.events.filter((e) => e.startsWith('line '));
    expect({ lines: lines.length, live: err.events.length - lines.length, first: lines[0], last: lines.at(-1) }).toEqual({
      lines: 21, live: 0, first: 'line [    1/56000, 0 failed, ETA 46m40s] PASS s (sim:skylake) 50 ms', last: 'line [56000/56000, 0 failed] PASS s (sim:skylake) 50 ms',
    });
  });

  test('slow runs print a line at least every 30 s', () => {
    const err = fakeStderr(false);
    feed(err, 1000, { ms: 20_000, tick: PLAIN_EVERY_MS / 2 + 1 });
    // Every second run comes 30 s after the last line (the count rule, 50 runs, never comes first); and the last run.
    expect(err.events.length).toBe(501);
  });

  test('every failed run keeps its line', () => {
    const err = fakeStderr(false);
    feed(err, 1000, { failing: [7, 8, 9] });
    expect(err.events.filter((e) => e.includes('FAIL'))).toEqual([
      'line [   7/1000] FAIL s (sim:skylake) 100 ms  x: y', 'line [   8/1000] FAIL s (sim:skylake) 100 ms  x: y', 'line [   9/1000] FAIL s (sim:skylake) 100 ms  x: y',
    ]);
  });

  test('a sweep prints a seed\'s line when the seed that ends is due, with the totals and the time left', () => {
    const err = fakeStderr(false);
    feed(err, 6, { sweep: true, perSeed: 2, ms: 500 });
    expect(err.events).toEqual([
      'line [1/6, 0 failed, ETA 3s] PASS s (sim:skylake) seed 1 500 ms',
      'line seed 1: 2 runs, 0 failed, 1.0 s (2/6 runs made, 0 failed so far, ETA 2s)',
      'line seed 2: 2 runs, 0 failed, 1.0 s (4/6 runs made, 0 failed so far, ETA 1s)',
      'line seed 3: 2 runs, 0 failed, 1.0 s (6/6 runs made, 0 failed so far)',
    ]);
  });
});

test.for([[0, '0s'], [59_400, '59s'], [61_000, '1m01s'], [3_599_000, '59m59s'], [3_720_000, '1h02m']] as const)('%i ms is shown as %s', ([ms, text]) => {
  expect(duration(ms)).toBe(text);
});

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');

describe.skipIf(!existsSync(CLI))('through a pipe (run `npm run build` first)', () => {
  test('24 runs print plain lines, fewer than one per run, no terminal control codes, the first and the last', async () => {
    const out = join(await tmpRoot('ptlab-progress-'), 'pipe');
    const r = await execa('node', [CLI, 'run', 'branch-disable', 'pmi-at-final-stop', 'single-range-wrap', 'err-reserved-bit', '--out', out], { reject: false, timeout: 60_000 });
    const lines = r.stderr.split('\n').filter((l) => /^\[\s*\d+\/24, \d+ failed/.test(l));
    expect({
      code: r.exitCode, control: /[\r\x1b]/.test(r.stderr), few: lines.length > 2 && lines.length <= 14,
      first: /^\[ 1\/24, 0 failed, ETA \d+s\] (PASS|skip) branch-disable \(sim:broadwell\)/.test(lines[0] ?? ''),
      last: /^\[24\/24, 0 failed\] PASS err-reserved-bit \(sim:full\)/.test(lines.at(-1) ?? ''),
    }).toEqual({ code: 0, control: false, few: true, first: true, last: true });
  }, 60_000);
});
