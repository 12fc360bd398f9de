// The crash-point sweep's bounded slice for CI (the whole sweep: `npm run sweep -- --crash-points`,
// docs/design.md "The crash-point sweep"): scenarios of every shape — ToPA that grows, single-entry,
// back-to-back PMIs, an operational error, a hand-programmed context switch, an early end — on the
// single-entry and the full profile, with failures injected at operations spread over each run in all
// four modes; then `ptlab run --all` stopped by signals. Nothing may break the invariant, and a driver
// that frees before it disables must be caught.
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { signalSweep } from '../../harness/crash/signal-sweep.js';
import { crashSweep } from '../../harness/crash/sweep.js';
import { findScenario } from '../../harness/scenarios/index.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot();
const SLICE = ['topa-grow', 'single-entry-topa', 'pmi-back-to-back', 'err-topa-midrun', 'context-switch-manual', 'xsaves-roundtrip', 'teardown-early-end'].map(findScenario);

describe('the crash-point sweep (bounded slice)', () => {
  test('no injected failure breaks the invariant: no corrupt event, TraceEn=0 where the link lives, every allocated byte freed or reported', async () => {
    const s = await crashSweep({ scenarios: SLICE, profiles: ['broadwell', 'full'], seed: 1, maxPoints: 40, out: join(root, 'sweep') });
    expect(s.notSwept).toEqual([]);
    expect(s.runs).toBeGreaterThan(150);
    expect(Object.values(s.byMode).every((n) => n > 10)).toBe(true);
    expect({ corrupt: s.corruptEvents, traceEnLeft: s.traceEnLeft, unaccounted: s.unaccountedBytes, violations: s.violations.map((v) => `${v.scenario}/${v.profile}@${v.at} ${v.mode}: ${v.violations.join(',')}`) })
      .toEqual({ corrupt: 0, traceEnLeft: 0, unaccounted: 0, violations: [] });
    // Dropped links leave tracing on and everything leaked: that is the safe outcome, and it happened.
    expect(s.leakedBytes).toBeGreaterThan(0);
  }, 600_000);

  test('a driver that frees before it disables (driver fault free-before-disable) is caught as corrupt', async () => {
    const s = await crashSweep({ scenarios: [findScenario('topa-grow')], profiles: ['full'], seed: 1, maxPoints: 12, out: join(root, 'negative'), driverFaults: ['free-before-disable'], modes: ['throw'] });
    expect(s.corruptEvents).toBeGreaterThan(0);
    expect(s.violations.some((v) => v.violations.includes('corrupt'))).toBe(true);
  }, 300_000);

  test('a checkpoint: a sweep stopped part-way goes on where it stopped, each pair counted once; another plan sweeps again', async () => {
    const checkpoint = join(root, 'checkpoint.jsonl');
    const plan = { profiles: ['full'] as const, seed: 1, maxPoints: 6, out: join(root, 'cp'), checkpoint, modes: ['throw', 'abort'] as const };
    const [a, b] = [findScenario('topa-grow'), findScenario('topa-stop')];
    const whole = await crashSweep({ ...plan, scenarios: [a, b], checkpoint: undefined });
    // The first pair, then a stop: its line is in the checkpoint (and a cut line from the stop after it).
    await crashSweep({ ...plan, scenarios: [a] });
    await appendFile(checkpoint, '{"plan":"cut sho');
    const made: string[] = [];
    const resumed = await crashSweep({ ...plan, scenarios: [a, b], progress: (p) => made.push(p.scenario) });
    expect([new Set(made), resumed]).toEqual([new Set(['topa-stop']), whole]);
    const again: string[] = [];
    await crashSweep({ ...plan, maxPoints: 5, scenarios: [a], progress: (p) => again.push(p.scenario) });
    expect(again.length).toBeGreaterThan(0);
  }, 300_000);

  test('ptlab run --all stopped by SIGTERM or SIGINT (once or twice) at random moments leaves a consistent suite', async () => {
    const ptlab = fileURLToPath(new URL('../../dist/harness/cli/ptlab.js', import.meta.url));
    const points = await signalSweep({ ptlab, points: 4, spanMs: 3000, out: join(root, 'signals'), seed: 11 });
    expect(points.map((p) => ({ n: p.n, problems: p.problems }))).toEqual(points.map((p) => ({ n: p.n, problems: [] })));
    expect(points.filter((p) => p.exitCode === 143 || p.exitCode === 130).length).toBeGreaterThanOrEqual(3);
  }, 300_000);
});
