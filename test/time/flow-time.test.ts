// `ptlab flow --time` (docs/sdm/packets.md §13.1) on modelled traces: every record's time equals
// libipt's (pt_insn_time at the branch, test/libipt/ptflow.c --time), and lies within the stated
// tolerance of the model's truth: the TSC at which the branch retired.
import { execa } from 'execa';
import { readFile, writeFile } from 'node:fs/promises';
import { timesAgainstTruth } from '../../harness/scenarios/kit/time-check.js';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { buildPtflow } from '../../harness/bench/libipt-flow-tool.js';
import { LibiptToolsError } from '../../harness/bench/libipt-tools.js';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { DEFAULT_CLOCK } from '../../harness/sim/trace/clock.js';
import { SimTarget } from '../../harness/sim/sim-target.js';
import { generateWorkload } from '../../harness/sim/workload/index.js';
import type { TruthLog } from '../../harness/sim/trace/truth.js';
import { tmpRoot } from '../scenarios/tmp.js';
import { ptlab } from '../cli/run-main.js';

const root = await tmpRoot('ptlab-flow-time-');
let exe = '', skipReason = '';
try {
  exe = await buildPtflow();
} catch (e) {
  if (!(e instanceof LibiptToolsError) || process.env['CI'] === 'true') throw e;
  skipReason = `libipt unavailable (${e.reason})`;
}

const MTC_FREQ = 3;
/** The model's timing facts, as image.json states them (harness/sim/trace/clock.ts DEFAULT_CLOCK). */
const TIMING = ['--mtc-freq', String(MTC_FREQ), '--cpuid-0x15.eax', String(DEFAULT_CLOCK.tscArtDen), '--cpuid-0x15.ebx', String(DEFAULT_CLOCK.tscArtNum), '--nom-freq', String(DEFAULT_CLOCK.p1)];
/** One MTC period in TSC ticks. */
const PERIOD = 2 ** MTC_FREQ * (DEFAULT_CLOCK.tscArtNum / DEFAULT_CLOCK.tscArtDen);

interface Traced { trace: string; image: string; base: bigint; truth: TruthLog }

/** A lossless model trace of workload `seed` (DisRETC, libipt's forms) with TSC and MTC, and CYC when `cyc`. */
async function traced(seed: number, cyc: boolean): Promise<Traced> {
  const w = generateWorkload(seed, { branches: 20_000 });
  const size = 16 * 2 ** 20;
  await using t = await SimTarget.create({ profile: 'skylake', memory: { ramSize: 2 * size, maxContiguous: size }, trace: { libiptCompat: true, truth: true } });
  const region = await t.phys.alloc(size, size);
  await t.msrBatch(0, [
    { op: 'wrmsr', msr: 0x571, value: 0n }, { op: 'wrmsr', msr: 0x560, value: region.base }, { op: 'wrmsr', msr: 0x561, value: BigInt(size - 1) },
    { op: 'wrmsr', msr: 0x570, value: IA32_RTIT_CTL.encode({ TraceEn: true, User: true, BranchEn: true, DisRETC: true, PSBFreq: 3, TSCEn: true, MTCEn: true, MTCFreq: MTC_FREQ, CYCEn: cyc }) },
  ]);
  await using ex = t.start(w, 0);
  for await (const _e of ex.events) { /* run to the exit */ }
  await t.wrmsr(0, 0x570, 0n);
  const name = `w${seed}${cyc ? '-cyc' : ''}`;
  const trace = join(root, `${name}.pt`), image = join(root, `${name}.bin`);
  await writeFile(trace, await t.phys.read(region.base, t.written(0)));
  await writeFile(image, w.image);
  return { trace, image, base: w.base, truth: t.truthLog(0)! };
}

const json = (out: string): Record<string, string>[] => out.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, string>);
const withoutTime = (r: Record<string, string>): string => JSON.stringify({ ...r, tsc: undefined });

describe.each([false, true])('flow --time on the model, CYC %s', (cyc) => {
  const run = traced(cyc ? 11 : 7, cyc);

  test.skipIf(skipReason !== '')(`every branch's time is libipt's pt_insn_time${skipReason ? ` (skipped: ${skipReason})` : ''}`, async () => {
    const t = await run;
    const ours = json((await ptlab('flow', '--time', '--json', ...TIMING, t.trace, '--raw', `${t.image}:0x${t.base.toString(16)}`)).out);
    const libipt = json((await execa(exe, ['--time', String(MTC_FREQ), String(DEFAULT_CLOCK.tscArtDen), String(DEFAULT_CLOCK.tscArtNum), String(DEFAULT_CLOCK.p1), t.trace, t.image, `0x${t.base.toString(16)}`], { maxBuffer: 1 << 30 })).stdout);
    expect(ours.length).toBe(libipt.length);
    // libipt may read ahead past the TIP that decided a branch, into the PSB+ or the CYC that follow
    // it: its time for that branch is then later than ptlab's, never earlier (docs/sdm/packets.md §13.1).
    let compared = 0, readAhead = 0;
    const differ: string[] = [];
    ours.forEach((o, i) => {
      const l = libipt[i]!;
      // ptflow times branches; the records must be the same branch (a zero-displacement jcc's "taken" differs: test/flow/libipt.test.ts).
      if (o.ip === undefined || o.kind === 'enable' || o.kind === 'disable' || withoutTime(o) !== withoutTime(l)) return;
      compared++;
      if (o.tsc === l.tsc) return;
      if (BigInt(l.tsc!) > BigInt(o.tsc!)) readAhead++;
      else differ.push(`${i}: ${o.tsc} vs ${l.tsc}`);
    });
    expect(compared).toBeGreaterThan(ours.length * 0.95);
    expect(differ).toEqual([]);
    expect(readAhead).toBeLessThan(compared / 1000);
  });

  test('every record is dated within the tolerance of the truth (harness/scenarios/kit/time-check.ts)', async () => {
    const t = await run;
    const c = timesAgainstTruth(new Uint8Array(await readFile(t.trace)), { image: new Uint8Array(await readFile(t.image)), base: t.base }, t.truth, 0, DEFAULT_CLOCK, { MTCFreq: MTC_FREQ, CYCEn: cyc });
    expect([c.ok, c.detail]).toEqual([true, expect.stringMatching(/^(\d+) of \1 records timed|^\d+ of \d+ records timed/)]);
    // A wrong TSC/ART ratio fails it.
    expect(timesAgainstTruth(new Uint8Array(await readFile(t.trace)), { image: new Uint8Array(await readFile(t.image)), base: t.base }, t.truth, 0, { ...DEFAULT_CLOCK, tscArtNum: 3 }, { MTCFreq: MTC_FREQ, CYCEn: cyc }).ok).toBe(false);
  });

  test('a wrong TSC/ART ratio breaks the tolerance (the check can fail)', async () => {
    const t = await run;
    const wrong = TIMING.map((v, i) => (TIMING[i - 1] === '--cpuid-0x15.ebx' ? '3' : v));
    const ours = json((await ptlab('flow', '--time', '--json', ...wrong, t.trace, '--raw', `${t.image}:0x${t.base.toString(16)}`)).out);
    const off = ours.filter((o, i) => o.tsc !== undefined && Math.abs(Number(BigInt(o.tsc)) - t.truth.tscOf(i)) > PERIOD * 4).length;
    expect(off).toBeGreaterThan(1000);
  });
});

await ptlab('run', 'mtc-tsc-timing', '--cpu', 'skylake', '--out', join(root, 'suite'));
const dir = join(root, 'suite', 'mtc-tsc-timing', 'skylake');

describe('flow --time on a run directory', () => {
  test('takes the timing from image.json: the same times as the options give', async () => {
    const fromDir = await ptlab('flow', '--time', '--json', dir);
    const given = await ptlab('flow', '--time', '--json', ...TIMING, join(dir, 'trace.pt'), '--raw', `${join(dir, 'image.bin')}:0x10000000`);
    expect(fromDir.code).toBe(0);
    expect(fromDir.out).toBe(given.out);
    expect(json(fromDir.out).filter((r) => r.tsc !== undefined).length).toBeGreaterThan(1000);
    // Without --time the records are those of plain flow.
    expect(json((await ptlab('flow', '--json', dir)).out).map(withoutTime)).toEqual(json(fromDir.out).map(withoutTime));
  });

  test('text lines end in tsc 0x…', async () => {
    const r = await ptlab('flow', '--time', dir);
    expect(r.out.split('\n').filter((l) => / {2}tsc 0x[0-9a-f]+$/.test(l)).length).toBeGreaterThan(1000);
  });
});
