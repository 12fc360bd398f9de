// Time estimation (docs/sdm/packets.md §13.1): libipt's rules on hand-made packet sequences, then
// on the modelled clock, where every TSC packet of a PSB+ tells the true time the estimate
// must have kept up with.
import { describe, expect, test } from 'vitest';
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { PacketKind } from '../../driver/decode/record.js';
import { FCR_ONE, TimeEstimator, type TimeConfig } from '../../driver/decode/time/estimator.js';
import { PacketClock } from '../../driver/decode/time/packet-clock.js';
import { BASE, make, regs, USER_BRANCHES, type CtlFields } from '../simtrace/harness.js';
import { DEFAULT_CLOCK } from '../../harness/sim/trace/clock.js';

/** The model's clock: TSC/ART = 2/1, P1 = 32 (harness/sim/trace/clock.ts DEFAULT_CLOCK). */
const MODEL: TimeConfig = { mtcFreq: 3, cpuid15Eax: DEFAULT_CLOCK.tscArtDen, cpuid15Ebx: DEFAULT_CLOCK.tscArtNum, nomFreq: DEFAULT_CLOCK.p1 };

function at(t: TimeEstimator): number {
  return Number(t.tsc());
}

describe('the rules of libipt pt_time.c', () => {
  test('no time before a TSC; a TSC gives it exactly, also above 2^53', () => {
    const t = new TimeEstimator(MODEL);
    t.onMtc(4);
    expect(t.known).toBe(false);
    t.onTsc(0x89ab_cdef, 0x00ff_ffff);
    expect(t.known).toBe(true);
    expect(t.tsc()).toBe(0x00ff_ffff_89ab_cdefn);
  });

  test('TMA then MTC: the time of the ART edge, FastCounter taken off the TSC', () => {
    const t = new TimeEstimator({ ...MODEL, mtcFreq: 0 });
    t.onTsc(1000, 0);
    t.onTma(100, 6);          // the TSC came 6 ticks after ART 100, i.e. ART 100 was at TSC 994
    expect(at(t)).toBe(1000);
    t.onMtc(101 & 0xff);      // ART 101: 994 + 1 · 2
    expect(at(t)).toBe(996);
    t.onMtc(105 & 0xff);      // four ticks on (a gap: MTCs were lost, the CTC says how many)
    expect(at(t)).toBe(1004);
  });

  test('the MTC payload is ART[MTCFreq+7:MTCFreq]; its CTC wraps once', () => {
    const t = new TimeEstimator({ ...MODEL, mtcFreq: 3 });
    t.onTsc(0, 0);
    t.onTma(0x7f8, 0);        // ART 0x7f8 = payload 0xff << 3
    t.onMtc(0x00);            // the next edge: ART 0x800, whose 8-bit slice wrapped to 0
    expect(at(t)).toBe(8 * 2);
  });

  test('MTCs between a TSC and its TMA are ignored (the TMA places them)', () => {
    const t = new TimeEstimator({ ...MODEL, mtcFreq: 0 });
    t.onTsc(500, 0);
    t.onMtc(7);
    expect(at(t)).toBe(500);
  });

  test('without CPUID.15H an MTC cannot be converted: counted lost, the time stays', () => {
    const t = new TimeEstimator({ mtcFreq: 0 });
    t.onTsc(500, 0);
    t.onTma(10, 0);
    t.onMtc(11);
    expect([at(t), t.lostMtc]).toEqual([500, 1]);
    t.onTsc(900, 0);
    expect(t.lostMtc).toBe(0);
  });

  test('CYC: cycles × the ratio given; without one, counted lost', () => {
    const t = new TimeEstimator(MODEL);
    t.onTsc(100, 0);
    t.onCyc(10, 0, 0);
    expect([at(t), t.lostCyc]).toEqual([100, 1]);
    t.onCyc(10, 0, 2 * FCR_ONE);   // the core at half P1: two TSC ticks per cycle
    expect(at(t)).toBe(120);
  });

  test('a CYC that spans MTC periods loses the cycles of the earlier ones (pt_time_adjust_cyc)', () => {
    const t = new TimeEstimator({ ...MODEL, mtcFreq: 0 });
    const one = FCR_ONE;      // one TSC tick per cycle
    t.onTsc(0, 0);
    t.onTma(0, 0);
    t.onCyc(1, 0, one);
    t.onMtc(3);               // ART 3: 3 ticks × 2 = TSC 6
    t.onMtc(5);               // ART 5: TSC 10, no CYC since ART 3
    expect(at(t)).toBe(10);
    t.onCyc(10, 0, one);      // 10 cycles since the last CYC, 4 of them in the period ART 3–5
    expect(at(t)).toBe(10 + 6);
    t.onCyc(3, 0, one);            // a later CYC of the same period adds all of its cycles
    expect(at(t)).toBe(19);
  });

  test('the epoch moves whenever the estimate may have changed', () => {
    const t = new TimeEstimator(MODEL);
    const e0 = t.epoch;
    t.onTsc(1, 0);
    expect(t.epoch).toBeGreaterThan(e0);
  });
});

/** Every packet of `trace` fed to a packet clock; at each TSC after the first: [estimate just before, the TSC]. */
function estimatesAtTsc(trace: Uint8Array, config: TimeConfig): [number, number][] {
  const clock = new PacketClock(config);
  const d = new PacketDecoder(trace);
  const r = d.record;
  const out: [number, number][] = [];
  while (d.next()) {
    if (r.kind === PacketKind.tsc && clock.time.known) out.push([at(clock.time), (r.hi >>> 0) * 2 ** 32 + (r.lo >>> 0)]);
    clock.apply(r);
  }
  return out;
}

/** A modelled run of `blocks` basic blocks (`insns` instructions, then a taken jcc) with `ctl` timing. */
function modelled(ctl: CtlFields, blocks: number, insns: (i: number) => number): Uint8Array {
  const t = make();
  t.g.traceEnable(BASE, regs({ ...USER_BRANCHES, PSBFreq: 0, ...ctl }));
  for (let i = 0; i < blocks; i++) {
    t.g.instructions(insns(i));
    t.g.branchJcc(BASE, BASE + 2, BASE, true);
  }
  t.g.traceDisable(BASE);
  t.g.flush();
  return t.sink.bytes();
}

describe('on the modelled clock', () => {
  // One MTC period in TSC ticks at MTCFreq 3: 8 ART ticks × TSC/ART.
  const period = 8 * (DEFAULT_CLOCK.tscArtNum / DEFAULT_CLOCK.tscArtDen);

  test('MTC alone: just before each PSB+ TSC the estimate is behind it by less than one MTC period and a block', () => {
    const longest = 40 + DEFAULT_CLOCK.cyclesPerBranch;
    const pairs = estimatesAtTsc(modelled({ TSCEn: true, MTCEn: true, MTCFreq: 3 }, 20_000, (i) => (i * 7) % 40), MODEL);
    expect(pairs.length).toBeGreaterThan(20);
    for (const [estimate, tsc] of pairs) {
      expect(estimate).toBeLessThanOrEqual(tsc);
      expect(tsc - estimate).toBeLessThan(period + longest);
    }
  });

  test('with CYC the estimate is closer still: within one MTC period, never ahead by more', () => {
    const pairs = estimatesAtTsc(modelled({ TSCEn: true, MTCEn: true, MTCFreq: 3, CYCEn: true }, 20_000, (i) => (i * 7) % 40), MODEL);
    expect(pairs.length).toBeGreaterThan(20);
    let lagMtcOnly = 0, lagCyc = 0;
    for (const [estimate, tsc] of pairs) {
      expect(Math.abs(tsc - estimate)).toBeLessThan(period);
      lagCyc += tsc - estimate;
    }
    for (const [estimate, tsc] of estimatesAtTsc(modelled({ TSCEn: true, MTCEn: true, MTCFreq: 3 }, 20_000, (i) => (i * 7) % 40), MODEL)) lagMtcOnly += tsc - estimate;
    expect(lagCyc).toBeLessThan(lagMtcOnly);
  });

  test('a wrong TSC/ART ratio shows: the estimate runs off the TSC packets', () => {
    const pairs = estimatesAtTsc(modelled({ TSCEn: true, MTCEn: true, MTCFreq: 3 }, 20_000, (i) => (i * 7) % 40), { ...MODEL, cpuid15Ebx: 3 });
    expect(pairs.some(([estimate, tsc]) => Math.abs(tsc - estimate) >= period + 42)).toBe(true);
  });
});
