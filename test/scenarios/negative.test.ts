// Negative controls: the model knob that breaks what a
// scenario checks turns its verdict to "fail", for every scenario.
import { expect, test } from 'vitest';
import { SCENARIOS } from '../../harness/scenarios/index.js';
import { tmpRoot } from './tmp.js';
import { runWithKnobs } from './verdicts.js';

const root = await tmpRoot();

test.for(SCENARIOS.map((s) => s.name))('%s fails when the model has its negative-control knob', async (name) => {
  const s = SCENARIOS.find((x) => x.name === name)!;
  const r = await runWithKnobs(s, root, [s.negative]);
  expect([r.verdict, r.expectations.some((e) => !e.ok)]).toEqual(['fail', true]);
});

test('without the knob the same run passes (the control is the knob, not the set-up)', async () => {
  const s = SCENARIOS.find((x) => x.name === 'topa-grow')!;
  expect((await runWithKnobs(s, root, [])).verdict).toBe('pass');
});
