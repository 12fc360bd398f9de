// Runs a scenario on every sim profile (or with a knob on the first profile it applies to).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { simApplicability } from '../../harness/cli/commands/list.js';
import { runScenario } from '../../harness/runner/run-scenario.js';
import type { ResultJson } from '../../harness/rundir/result.js';
import type { Scenario } from '../../harness/scenarios/kit/scenario.js';
import type { KnobName } from '../../harness/sim/knobs/knobs.js';
import { PROFILE_NAMES, type ProfileName } from '../../harness/sim/profiles.js';

/** Verdicts on every profile: "pass", "skip", or "fail: reason". */
export async function verdictsEverywhere(s: Scenario, root: string, seed = 1): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const p of PROFILE_NAMES) {
    const r = await runScenario({ scenario: s, target: 'sim', profile: p, seed }, join(root, s.name, p));
    out[p] = r.verdict === 'fail' ? `fail: ${r.reason}` : r.verdict;
  }
  return out;
}

/** Profiles whose losses.json (with `written`) does not balance: written ≠ collected + Σ lost.bytes. */
export async function unbalancedLedgers(s: Scenario, root: string): Promise<string[]> {
  const bad: string[] = [];
  for (const p of PROFILE_NAMES) {
    const f = join(root, s.name, p, 'losses.json');
    if (!existsSync(f)) continue;
    const l = JSON.parse(await readFile(f, 'utf8')) as { written?: number; collected: number; lost: { bytes: number | null }[] };
    if (l.written !== undefined && l.written !== l.collected + l.lost.reduce((a, x) => a + (x.bytes ?? 0), 0)) bad.push(p);
  }
  return bad;
}

/** The first sim profile the scenario runs on. */
export function firstProfile(s: Scenario): ProfileName {
  const a = simApplicability(s);
  return PROFILE_NAMES.find((p) => a[p] === 'runs')!;
}

/** The scenario on its first profile (or `profile`) with `knobs`. */
export function runWithKnobs(s: Scenario, root: string, knobs: readonly KnobName[], profile: ProfileName = firstProfile(s)): Promise<ResultJson> {
  return runScenario({ scenario: s, target: 'sim', profile, seed: 1, knobs }, join(root, 'neg', s.name, profile));
}
