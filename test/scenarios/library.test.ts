// The scenario library as `ptlab list` shows it: the names it must have,
// a negative control each, and somewhere on the sim where each one runs.
import { describe, expect, test } from 'vitest';
import { SCENARIOS } from '../../harness/scenarios/index.js';
import { simApplicability } from '../../harness/cli/commands/list.js';
import { KNOB_NAMES } from '../../harness/sim/knobs/knobs.js';

const REQUIRED = [
  'topa-grow', 'topa-chain', 'topa-circular-fresh', 'topa-protect-unread', 'topa-stop', 'single-range-wrap', 'single-entry-topa',
  'pmi-skid', 'pmi-preservation', 'xsaves-roundtrip', 'xsaves-pending-pmi', 'cr3-filter', 'ip-filter', 'tracestop', 'ret-compression',
  'err-reserved-bit', 'err-write-while-enabled', 'err-topa-misaligned', 'err-topa-end-in-entry0', 'kvm-guest-limits',
];

describe('the scenario library', () => {
  test('has every scenario the catalogue must have', () => {
    expect(REQUIRED.filter((n) => !SCENARIOS.some((s) => s.name === n))).toEqual([]);
  });

  test('has no two scenarios with the same name', () => {
    expect(new Set(SCENARIOS.map((s) => s.name)).size).toBe(SCENARIOS.length);
  });

  test.for(SCENARIOS.map((s) => s.name))('%s names a negative-control knob the model has', (name) => {
    expect(KNOB_NAMES).toContain(SCENARIOS.find((s) => s.name === name)!.negative);
  });

  test.for(SCENARIOS.map((s) => s.name))('%s runs on at least one sim profile and gives a reason everywhere else', (name) => {
    const where = Object.values(simApplicability(SCENARIOS.find((s) => s.name === name)!));
    expect([where.includes('runs'), where.every((w) => w === 'runs' || w.length > 10)]).toEqual([true, true]);
  });
});
