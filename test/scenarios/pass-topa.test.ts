// Every ToPA, PMI and context-switch scenario passes on every sim profile it
// applies to and skips (with its reason) on the others.
import { expect, test } from 'vitest';
import { SCENARIOS } from '../../harness/scenarios/index.js';
import { simApplicability } from '../../harness/cli/commands/list.js';
import { tmpRoot } from './tmp.js';
import { unbalancedLedgers, verdictsEverywhere } from './verdicts.js';

const root = await tmpRoot();
const MINE = SCENARIOS.filter((s) => /^(topa-|single-|pmi-|xsaves-|context-)/.test(s.name));

test.for(MINE.map((s) => s.name))('%s passes wherever it applies, skips elsewhere, and its ledgers balance', async (name) => {
  const s = MINE.find((x) => x.name === name)!;
  const want = Object.fromEntries(Object.entries(simApplicability(s)).map(([p, a]) => [p, a === 'runs' ? 'pass' : 'skip']));
  const verdicts = await verdictsEverywhere(s, root);
  expect([verdicts, await unbalancedLedgers(s, root)]).toEqual([want, []]);
});
