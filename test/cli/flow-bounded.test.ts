// `ptlab flow` streams its trace and bounds its output (a fuzzed trace that runs away at every PSB
// printed 131 M records for 1 MB; a 2 GB trace was held whole in memory).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { RECORDS_FLOOR } from '../../harness/cli/commands/flow.js';
import { ipPkt, MODE64, tnt, trace } from '../flow/helpers.js';
import { tmpRoot } from '../scenarios/tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const root = await tmpRoot('ptlab-flowbound-');
const BASE = 0x1000_0000n;

/** Code that runs away: 64 direct calls to the next instruction, then a jump back (a record each, no packet needed). */
const image = join(root, 'loop.bin');
// jmp rel32 at offset 320 (5 bytes) back to 0: rel32 = -325.
writeFileSync(image, Uint8Array.from([...Array.from({ length: 64 }, () => [0xe8, 0, 0, 0, 0]).flat(), 0xe9, 0xbb, 0xfe, 0xff, 0xff]));

/** `n` times: a PSB+ that starts tracing at the loop (every sync point runs away to --max-insns). */
function runawayTrace(n: number): string {
  const one = trace([{ type: 'psb' }, MODE64, { type: 'psbend' }], ipPkt('tip.pge', BASE), tnt('1'));
  const bytes = new Uint8Array(one.length * n);
  for (let i = 0; i < n; i++) bytes.set(one, i * one.length);
  const p = join(root, `runaway-${n}.pt`);
  writeFileSync(p, bytes);
  return p;
}

/** The peak resident set of `pid` in kB (VmHWM), or 0 once it is gone. */
function peakRssKb(pid: number): number {
  try { return Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]); } catch { return 0; }
}

describe('ptlab flow', () => {
  test('a trace that runs away at every PSB stops at the output bound: exit 1, said on stderr', async () => {
    const t = runawayTrace(4096);
    const bytes = readFileSync(t).length;
    const r = await execa('node', [CLI, 'flow', t, '--image', `${image}@0x10000000`, '--json'], { reject: false, stdout: 'ignore', timeout: 120_000 });
    const m = /stopped after (\d+) records for (\d+) bytes of trace read/.exec(r.stderr);
    expect([r.exitCode, m !== null, Number(m?.[1]) <= RECORDS_FLOOR + 64 * bytes, Number(m?.[2])]).toEqual([1, true, true, bytes]);
  }, 130_000);

  test('--max-records-per-byte 0 lifts the bound (the same trace, cut short, runs to its end)', async () => {
    const t = runawayTrace(8);
    const r = await execa('node', [CLI, 'flow', t, '--image', `${image}@0x10000000`, '--json', '--max-records-per-byte', '0', '--tolerate-errors'], { reject: false, timeout: 60_000 });
    expect([r.exitCode, r.stdout.split('\n').filter((l) => l.includes('"runaway"')).length]).toEqual([0, 8]);
  });

  test('the trace is streamed: 512 MB on standard input is decoded in bounded memory', async () => {
    const zeros = spawn('head', ['-c', String(512 << 20), '/dev/zero'], { stdio: ['ignore', 'pipe', 'ignore'] });
    // Zeros are PAD packets and never a PSB: one "no sync" error at the end (--tolerate-errors: exit 0).
    const flow = spawn('node', [CLI, 'flow', '-', '--image', `${image}@0x10000000`, '--tolerate-errors'], { stdio: ['pipe', 'ignore', 'pipe'] });
    zeros.stdout.pipe(flow.stdin);
    let peak = 0;
    const poll = setInterval(() => { peak = Math.max(peak, peakRssKb(flow.pid!)); }, 50);
    const code = await new Promise<number | null>((r) => flow.on('close', r));
    clearInterval(poll);
    expect([code, peak > 0 && peak < 300_000]).toEqual([0, true]);
  }, 120_000);
});
