// The driver's guards against misuse and broken invariants: each refuses with a typed error
// instead of going on with a wrong state. No valid scenario reaches them (mutation testing leaves
// them out of the scenario suite's score for that reason), so they are tested here.
import { describe, expect, test } from 'vitest';
import { traceContexts } from '../../driver/contexts.js';
import { readImage } from '../../driver/context-switch.js';
import { TopaTable } from '../../driver/topa/table.js';
import { SimTarget } from '../../harness/sim/sim-target.js';
import { rig } from './rig.js';
import { TraceSession } from '../../driver/session.js';
import type { TopaManager } from '../../driver/topa/manager.js';

const page = { base: 0x10_0000n, size: 4096 };

describe('driver guards', () => {
  test('traceContexts with no context is bad_config', async () => {
    await using sim = await SimTarget.create({ profile: 'skylake' });
    const err = await traceContexts(sim, [], { sliceBranches: 10 }).catch((e: unknown) => e);
    expect([(err as { code?: string }).code, (err as Error).message]).toEqual(['bad_config', 'no context to run']);
  });

  test('a ToPA pointer into a table the run does not own is topa_error, naming OUTPUT_BASE', async () => {
    const r = await rig('skylake');
    const s = await TraceSession.open(r.target, { output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 2 } });
    const m = s.plan as TopaManager;
    expect(() => m.resolve({ outputBase: 0x7777_0000n, maskPtrs: 0x7fn })).toThrow(/OUTPUT_BASE 0x77770000 is not one of this run's ToPA tables/);
  });

  test('a table slot that is not an output entry, or is unused, is bad_state', () => {
    const t = new TopaTable(page, 8);
    t.slots.push({ kind: 'end', to: t });
    expect([() => t.output(0), () => t.output(3), () => t.entry(5)].map((f) => { try { f(); return 'ok'; } catch (e) { return (e as { code?: string }).code; } }))
      .toEqual(['bad_state', 'bad_state', 'bad_state']);
  });

  test('an XSAVE area without PT state (XCOMP_BV[8] = 0) is bad_state', () => {
    const area = new Uint8Array(576);
    new DataView(area.buffer).setBigUint64(520, 1n << 63n, true); // XCOMP_BV: compacted form, no components
    expect(() => readImage({ kind: 'xsaves', area, extra: [] })).toThrow(/holds no PT state/);
  });
});
