// Negative controls: the model knob that breaks what a
// scenario checks turns its verdict to "fail", for every scenario.
import { expect, test } from 'vitest';
import { SCENARIOS } from '../../harness/scenarios/index.js';
import { tmpRoot } from './tmp.js';
import { simApplicability } from '../../harness/cli/commands/list.js';
import { firstProfile, runWithKnobs } from './verdicts.js';

const root = await tmpRoot();

// On its first profile and on `full` (every capability): a scenario may take another path where the
// CPU can do more (trace-confined confines by IP filter there, by CR3 on Broadwell), and its knob must
// break that path too.
test.for(SCENARIOS.map((s) => s.name))('%s fails when the model has its negative-control knob, on its first profile and on full', async (name) => {
  const s = SCENARIOS.find((x) => x.name === name)!;
  const profiles = [...new Set([firstProfile(s), ...(simApplicability(s).full === 'runs' ? ['full' as const] : [])])];
  const got: string[] = [];
  for (const p of profiles) {
    const r = await runWithKnobs(s, root, [s.negative], p);
    got.push(`${p}: ${r.verdict}${r.expectations.some((e) => !e.ok) ? '' : ' (no failed expectation)'}`);
  }
  expect(got).toEqual(profiles.map((p) => `${p}: fail`));
});

test('without the knob the same run passes (the control is the knob, not the set-up)', async () => {
  const s = SCENARIOS.find((x) => x.name === 'topa-grow')!;
  expect((await runWithKnobs(s, root, [])).verdict).toBe('pass');
});
