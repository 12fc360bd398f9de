// The CLI fuzz campaign: every command × every file slot × every input kind (the matrix, what
// `npm test` runs), or as many random draws as asked (`npm run fuzz`), each case in a process of
// its own, `jobs` at a time; the fixtures are made first with ptlab itself.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Rng } from '../sim/workload/prng.js';
import { FUZZ_COMMANDS } from './commands.js';
import { makeFixtures } from './fixtures.js';
import { INPUT_KINDS } from './inputs.js';
import { runCase, type CaseOutcome, type FuzzCase } from './run-case.js';

/** Every command × slot × kind once, seeds from `seed` on. */
export function matrixCases(seed: number): FuzzCase[] {
  const cases: FuzzCase[] = [];
  for (const command of FUZZ_COMMANDS) {
    for (const s of command.slots) for (const kind of INPUT_KINDS) cases.push({ command, slot: s.name, kind, seed: seed + cases.length });
  }
  return cases;
}

/** `n` cases drawn at random (a command, one of its slots, a kind), seeds from `seed` on. */
export function randomCases(n: number, seed: number): FuzzCase[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const command = rng.pick(FUZZ_COMMANDS);
    return { command, slot: rng.pick(command.slots).name, kind: rng.pick(INPUT_KINDS), seed: seed + i };
  });
}

/**
 * Runs `cases` with `cli` (dist/harness/cli/ptlab.js) in a new directory under `work`, `jobs` at a
 * time, in case order; that directory (and only it) is removed at the end.
 */
export async function runCampaign(cli: string, work: string, cases: readonly FuzzCase[], jobs: number, onCase?: (o: CaseOutcome) => void): Promise<CaseOutcome[]> {
  await mkdir(work, { recursive: true });
  const own = await mkdtemp(join(work, 'ptlab-fuzz-'));
  try {
    return await runIn(own, cli, cases, jobs, onCase);
  } finally {
    await rm(own, { recursive: true, force: true });
  }
}

async function runIn(work: string, cli: string, cases: readonly FuzzCase[], jobs: number, onCase?: (o: CaseOutcome) => void): Promise<CaseOutcome[]> {
  const fixtures = join(work, 'fixtures');
  const facts = await makeFixtures(cli, fixtures);
  const outcomes: CaseOutcome[] = new Array(cases.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < cases.length; i = next++) {
      const c = cases[i]!;
      outcomes[i] = await runCase(c, cli, fixtures, facts, work, new Rng(c.seed));
      onCase?.(outcomes[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, jobs) }, lane));
  return outcomes;
}

/** The campaign's figures, as `npm run fuzz` prints them. */
export interface CampaignSummary {
  readonly cases: number;
  readonly bad: number;
  readonly exit70: number;
  readonly hangs: number;
  readonly maxMs: number;
  readonly peakRssMiB: number;
  readonly byExit: Readonly<Record<string, number>>;
}

export function summarize(outcomes: readonly CaseOutcome[]): CampaignSummary {
  const byExit: Record<string, number> = {};
  for (const o of outcomes) byExit[String(o.exitCode)] = (byExit[String(o.exitCode)] ?? 0) + 1;
  return {
    cases: outcomes.length,
    bad: outcomes.filter((o) => o.problems.length > 0).length,
    exit70: outcomes.filter((o) => o.exitCode === 70).length,
    hangs: outcomes.filter((o) => o.problems.some((p) => p.startsWith('hung'))).length,
    maxMs: Math.max(0, ...outcomes.map((o) => o.ms)),
    peakRssMiB: Math.round(Math.max(0, ...outcomes.map((o) => o.peakRssBytes)) / 2 ** 20),
    byExit,
  };
}
