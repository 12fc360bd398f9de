// Time calibration (driver/decode/time/calibration.ts; libipt pt_tcal_*): where the cycle-to-TSC
// ratio comes from, and when it is forgotten.
import { describe, expect, test } from 'vitest';
import { TimeCalibration } from '../../driver/decode/time/calibration.js';
import { FCR_ONE } from '../../driver/decode/time/estimator.js';

const ratio = (c: TimeCalibration): number => c.fcr() / FCR_ONE;

describe('the cycle-to-TSC ratio', () => {
  test('none at first; a PSB+ CBR gives P1/CBR when P1 is known, nothing without it', () => {
    const c = new TimeCalibration({ mtcFreq: 0, nomFreq: 32 });
    expect(c.fcr()).toBe(0);
    c.headerCbr(16);
    expect(ratio(c)).toBe(2);
    const noP1 = new TimeCalibration({ mtcFreq: 0 });
    noP1.headerCbr(16);
    expect(noP1.fcr()).toBe(0);
  });

  test('two MTCs with cycles between them measure it: ART ticks × EBX/EAX over the cycles', () => {
    const c = new TimeCalibration({ mtcFreq: 2, cpuid15Eax: 1, cpuid15Ebx: 3 });
    c.updateMtc(1);          // CTC 4
    c.updateCyc(6, 0);
    c.updateMtc(2);          // CTC 8: 4 ART ticks = 12 TSC ticks in 6 cycles
    expect(ratio(c)).toBe(2);
  });

  test('an MTC with no cycles before it waits: the next one measures the longer period', () => {
    const c = new TimeCalibration({ mtcFreq: 0, cpuid15Eax: 1, cpuid15Ebx: 1 });
    c.updateMtc(1);
    c.updateMtc(2);          // no cycles yet
    c.updateCyc(8, 0);
    c.updateMtc(3);          // 2 ticks (from CTC 1) over 8 cycles
    expect(ratio(c)).toBe(0.25);
  });

  test('without MTCs, two PSB+ TSCs measure it; a TSC outside PSB+ only restarts the count', () => {
    const c = new TimeCalibration({ mtcFreq: 0 });
    c.headerTsc(1000);
    c.updateCyc(100, 0);
    c.headerTsc(1300);
    expect(ratio(c)).toBe(3);
    const d = new TimeCalibration({ mtcFreq: 0 });
    d.headerTsc(1000);
    d.updateCyc(100, 0);
    d.updateTsc(1300);
    d.updateCyc(50, 0);
    d.headerTsc(1400);       // 100 ticks over the 50 cycles since the TSC outside PSB+
    expect(ratio(d)).toBe(2);
  });

  test('a CBR outside PSB+ is a new frequency: what was measured is dropped for P1/CBR', () => {
    const c = new TimeCalibration({ mtcFreq: 0, nomFreq: 30, cpuid15Eax: 1, cpuid15Ebx: 1 });
    c.updateMtc(0); c.updateCyc(4, 0); c.updateMtc(2);
    expect(ratio(c)).toBe(0.5);
    c.updateCbr(10);
    expect(ratio(c)).toBe(3);
    const noP1 = new TimeCalibration({ mtcFreq: 0, cpuid15Eax: 1, cpuid15Ebx: 1 });
    noP1.updateMtc(0); noP1.updateCyc(4, 0); noP1.updateMtc(2);
    noP1.updateCbr(10);
    expect(noP1.fcr()).toBe(0);
  });

  test('an OVF breaks the counts but keeps the ratio', () => {
    const c = new TimeCalibration({ mtcFreq: 0, cpuid15Eax: 1, cpuid15Ebx: 1 });
    c.updateMtc(0); c.updateCyc(4, 0); c.updateMtc(2);
    c.updateCyc(100, 0);
    c.updateOvf();
    expect(ratio(c)).toBe(0.5);
    c.updateMtc(5);          // the first MTC after the OVF only starts a count
    expect(ratio(c)).toBe(0.5);
  });
});
