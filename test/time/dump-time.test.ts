// `ptlab dump --time/--tcal` (ptdump's time columns, harness/cli/time-column.ts) on a model run:
// the column is the packet clock's estimate after each timing packet, with the run's image.json
// timing parameters unless the options give others.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { PacketKind } from '../../driver/decode/record.js';
import { PacketClock } from '../../driver/decode/time/packet-clock.js';
import type { TimeConfig } from '../../driver/decode/time/estimator.js';
import { tmpRoot } from '../scenarios/tmp.js';
import { ptlab } from '../cli/run-main.js';

const root = await tmpRoot('ptlab-dump-time-');
// mtc-tsc-timing traces with TSC and MTC at MTCFreq 3.
await ptlab('run', 'mtc-tsc-timing', '--cpu', 'skylake', '--out', join(root, 'suite'));
const run = join(root, 'suite', 'mtc-tsc-timing', 'skylake');
const trace = new Uint8Array(await readFile(join(run, 'trace.pt')));
const timing = (JSON.parse(await readFile(join(run, 'image.json'), 'utf8')) as { timing: { mtcFreq: number; nomFreq: number; cpuid15: { eax: number; ebx: number } } }).timing;
const CONFIG: TimeConfig = { mtcFreq: timing.mtcFreq, nomFreq: timing.nomFreq, cpuid15Eax: timing.cpuid15.eax, cpuid15Ebx: timing.cpuid15.ebx };

const TIMING_KINDS = new Set<number>([PacketKind.tsc, PacketKind.tma, PacketKind.mtc, PacketKind.cyc]);

/** [offset, estimate] after each TSC/TMA/MTC/CYC packet, computed in-process. */
function expected(config: TimeConfig): [number, string][] {
  const clock = new PacketClock(config);
  const d = new PacketDecoder(trace);
  const out: [number, string][] = [];
  while (d.next()) {
    clock.apply(d.record);
    if (TIMING_KINDS.has(d.record.kind)) out.push([d.record.offset, clock.tscHex() ?? '<unavailable>']);
  }
  return out;
}

/** [offset, column] of each dump line that ends in a `tsc` column. */
function columns(out: string, key = 'tsc'): [number, string][] {
  return out.split('\n').flatMap((l) => {
    const m = new RegExp(`^([0-9a-f]{16})  .{38}${key} (\\S+)$`).exec(l);
    return m === null ? [] : [[Number.parseInt(m[1]!, 16), m[2]!] as [number, string]];
  });
}

describe('ptlab dump --time on a run directory', () => {
  test('every timing line carries the estimate, with the run\'s MTCFreq and TSC/ART ratio from image.json', async () => {
    const r = await ptlab('dump', '--time', run);
    expect(r.code).toBe(0);
    const got = columns(r.out);
    expect(got.length).toBeGreaterThan(100);
    expect(got).toEqual(expected(CONFIG));
    // MTCs moved the time between the TSCs: most estimates are no TSC packet's value.
    const tscs = new Set<string>();
    const d = new PacketDecoder(trace);
    while (d.next()) if (d.record.kind === PacketKind.tsc) tscs.add(((d.record.hi >>> 0) * 2 ** 32 + (d.record.lo >>> 0)).toString(16).padStart(16, '0'));
    expect(got.filter(([, v]) => !tscs.has(v)).length).toBeGreaterThan(got.length / 2);
  });

  test('options given win over image.json: a wrong TSC/ART ratio gives other times', async () => {
    const r = await ptlab('dump', '--time', '--cpuid-0x15.ebx', '3', run);
    expect(columns(r.out)).toEqual(expected({ ...CONFIG, cpuid15Ebx: 3 }));
    expect(columns(r.out)).not.toEqual(expected(CONFIG));
  });

  test('on a trace file there is no image.json: libipt\'s defaults, so MTCs cannot move the time', async () => {
    const r = await ptlab('dump', '--time', join(run, 'trace.pt'));
    expect(columns(r.out)).toEqual(expected({ mtcFreq: 0 }));
  });

  test('--time-delta prints each estimate as the change since the one before', async () => {
    const abs = columns((await ptlab('dump', '--time', run)).out);
    const delta = columns((await ptlab('dump', '--time', '--time-delta', run)).out);
    let last = 0n;
    expect(delta).toEqual(abs.map(([off, v]) => {
      const t = BigInt(`0x${v}`), d = t >= last ? `+${(t - last).toString(16)}` : `-${(last - t).toString(16)}`;
      last = t;
      return [off, d];
    }));
  });

  test('--no-timing leaves the lines out, and the time still follows them', async () => {
    const r = await ptlab('dump', '--time', '--no-timing', run);
    expect(columns(r.out)).toEqual([]);
    expect(r.out).not.toMatch(/ mtc /);
  });

  test('--tcal shows the ratio P1/CBR from the PSB+ CBR (1.000 at the model\'s P1 = CBR)', async () => {
    const r = await ptlab('dump', '--tcal', run);
    const fcr = columns(r.out, 'fcr');
    expect(fcr.length).toBeGreaterThan(0);
    expect(new Set(fcr.map(([, v]) => v))).toEqual(new Set(['<unavailable>', '1.000']));
  });

  test('the time columns are text: with --json or the --stats counts they are refused', async () => {
    for (const argv of [['--json', '--time'], ['--json', '--tcal'], ['--stats', '--tcal'], ['--time-delta']]) {
      const r = await ptlab('dump', ...argv, run);
      expect([r.code, r.out]).toEqual([2, '']);
      expect(r.err).toMatch(/--(time|tcal|time-delta)/);
    }
  });
});
