// The scenario helpers' rules that verdicts rest on.
import { describe, expect, test } from 'vitest';
import { everyPmiHandled } from '../../harness/scenarios/kit/helpers.js';

const pmis = (...actions: string[]) => actions.map((action) => ({ action }));

describe('everyPmiHandled', () => {
  test('handled, handled on a saved image, and settled at the final stop all count as handled', () => {
    expect(everyPmiHandled(pmis('handled', 'handled-saved', 'final-stop'))).toBe(true);
  });

  test('a first PMI with GLOBAL_STATUS[55] clear (left in flight by the previous run\'s final stop) is allowed; a later one is not', () => {
    // topa-budget seed 105: run 2 began with the PMI run 1's final stop had acknowledged.
    expect([everyPmiHandled(pmis('not-topa', 'handled', 'final-stop')), everyPmiHandled(pmis('handled', 'not-topa', 'handled'))]).toEqual([true, false]);
  });

  test('a PMI ignored under PMI preservation is not handled', () => {
    expect(everyPmiHandled(pmis('handled', 'ignored-preserved'))).toBe(false);
  });
});
