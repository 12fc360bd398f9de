// The crash-point sweep's checkpoint (`npm run sweep -- --crash-points --resume`): one JSON line
// per scenario × profile pair swept, with the plan it was swept under (seed, points, modes, driver
// faults) and its summary. The whole sweep takes hours; a sweep stopped part-way — a signal, a
// machine turned off, a session that ended — goes on where it stopped, and its summary counts
// every pair once. Lines are appended one whole line at a time (O_APPEND), so parts of the sweep
// in other processes may add theirs to the same file; a line cut short by a crash is ignored.
import { appendFile, readFile } from 'node:fs/promises';
import type { CrashMode } from './inject.js';
import type { CrashSweepPlan, CrashSweepSummary } from './sweep.js';

/** What a pair was swept under: a pair swept under another plan is swept again. */
export function planKey(plan: CrashSweepPlan, modes: readonly CrashMode[]): string {
  return JSON.stringify({ seed: plan.seed, maxPoints: plan.maxPoints ?? null, modes, everyMode: plan.everyMode === true, driverFaults: plan.driverFaults ?? [] });
}

/** A pair's key: `scenario@profile`. */
export function pairKey(scenario: string, profile: string): string {
  return `${scenario}@${profile}`;
}

interface CheckpointLine { readonly plan: string; readonly pair: string; readonly summary: CrashSweepSummary }

/** The pairs `file` holds for `plan`, by pairKey; empty when the file does not exist yet. */
export async function readCheckpoint(file: string, plan: string): Promise<Map<string, CrashSweepSummary>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw e;
  }
  const out = new Map<string, CrashSweepSummary>();
  for (const l of text.split('\n')) {
    let line: CheckpointLine;
    try { line = JSON.parse(l) as CheckpointLine; } catch { continue; } // the last line of a killed sweep may be cut
    if (line.plan === plan && typeof line.pair === 'string' && typeof line.summary?.runs === 'number') out.set(line.pair, line.summary);
  }
  return out;
}

/** Adds one swept pair to `file`. */
export async function addToCheckpoint(file: string, plan: string, pair: string, summary: CrashSweepSummary): Promise<void> {
  await appendFile(file, `${JSON.stringify({ plan, pair, summary } satisfies CheckpointLine)}\n`, { mode: 0o644 });
}
