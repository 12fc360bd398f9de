// Negative controls of the DRIVER: each driver fault breaks one SDM rule in the
// driver itself, and the scenario suite — what a lab runs on real hardware — must turn at least
// one verdict to FAIL. Each fault is claimed by a scenario (`catches`), and every claiming scenario
// fails with it on the sim, on the first profile it runs on and on `full`, at several seeds (a lab
// runs one seed: a catch that holds on some seeds only is no catch), while it passes without it.
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { DRIVER_FAULT_NAMES, type DriverFault } from '../../driver/faults.js';
import { simApplicability } from '../../harness/cli/commands/list.js';
import { runScenario } from '../../harness/runner/run-scenario.js';
import { SCENARIOS } from '../../harness/scenarios/index.js';
import type { Scenario } from '../../harness/scenarios/kit/scenario.js';
import { tmpRoot } from './tmp.js';
import { firstProfile } from './verdicts.js';

const root = await tmpRoot();

/** The seeds each claim is checked on: the first, and two far from it. */
const SEEDS = [1, 2, 7401] as const;

/** Every (fault, scenario that claims it). */
const CLAIMS: readonly (readonly [DriverFault, string])[] = SCENARIOS.flatMap((s) => (s.catches ?? []).map((f) => [f, s.name] as const));

describe('every driver fault is caught by a scenario', () => {
  test.for(DRIVER_FAULT_NAMES)('%s is claimed by a scenario', (f) => {
    expect(CLAIMS.some(([g]) => g === f)).toBe(true);
  });

  test.for(CLAIMS)('%s turns %s to FAIL on the sim, at every seed', async ([f, name]) => {
    const s: Scenario = SCENARIOS.find((x) => x.name === name)!;
    const profiles = [...new Set([firstProfile(s), ...(simApplicability(s).full === 'runs' ? ['full' as const] : [])])];
    const verdicts: string[] = [];
    for (const seed of SEEDS) {
      for (const p of profiles) {
        const r = await runScenario({ scenario: s, target: 'sim', profile: p, seed, driverFaults: [f] }, join(root, f, name, p, String(seed)));
        verdicts.push(`${p}@${seed}: ${r.verdict}`);
      }
    }
    // Freeing while TraceEn may be 1 is worse than a failed check: the memory oracle calls the run corrupt.
    const want = f === 'free-before-disable' ? 'corrupt' : 'fail';
    expect(verdicts).toEqual(SEEDS.flatMap((seed) => profiles.map((p) => `${p}@${seed}: ${want}`)));
  });

  test.for([...new Set(SCENARIOS.filter((s) => s.catches?.length).map((s) => s.name))])('%s passes without a driver fault', async (name) => {
    const s = SCENARIOS.find((x) => x.name === name)!;
    const r = await runScenario({ scenario: s, target: 'sim', profile: firstProfile(s), seed: 1 }, join(root, 'clean', name));
    expect(r.verdict).toBe('pass');
  });

  test('a driver fault is recorded in result.json figures', async () => {
    const s = SCENARIOS.find((x) => x.catches?.includes('no-fail-safe'))!;
    const r = await runScenario({ scenario: s, target: 'sim', profile: firstProfile(s), seed: 1, driverFaults: ['no-fail-safe'] }, join(root, 'fig'));
    expect(r.figures.driverFaults).toBe('no-fail-safe');
  });
});
