// Every ToPA policy branch end to end on the model's output engine: PMIs handled by the driver's
// handler while bytes flow, then stop and collect. The stream must equal what the "CPU" wrote and
// the ledger must balance (docs/design.md: written = collected + Σ lost.bytes).
import { describe, expect, test } from 'vitest';
import { imbalance } from '../../driver/collect/ledger.js';
import type { TopaPolicy, TraceRequest } from '../../driver/request.js';
import { TraceSession } from '../../driver/session.js';
import type { TopaManager } from '../../driver/topa/manager.js';
import { pump, rig } from './rig.js';

async function run(policy: TopaPolicy, o: { regions: number; bytes: number; chunk?: number; profile?: 'skylake' | 'broadwell'; tableEntries?: number }) {
  const r = await rig(o.profile ?? 'skylake');
  const s = await TraceSession.open(r.target, { output: { scheme: 'topa', policy, regionSize: 4096, regions: o.regions, ...(o.tableEntries ? { tableEntries: o.tableEntries } : {}) } });
  await s.start();
  await pump(r, s, o.bytes, o.chunk ?? 512);
  const res = await s.stop(() => ({ written: r.out.written }));
  return { r, s, m: s.plan as TopaManager, res };
}

describe.each([
  { policy: 'grow', regions: 3, bytes: 40_000 },
  { policy: 'chain', regions: 3, bytes: 40_000 },
  { policy: 'circular-fresh', regions: 3, bytes: 40_000 },
  { policy: 'protect-unread', regions: 4, bytes: 40_000 },
  { policy: 'single-entry', regions: 1, bytes: 20_000, chunk: 256, profile: 'broadwell' },
] as const)('$policy', (c) => {
  test('the collected stream is exactly what the CPU wrote', async () => {
    const { r, res } = await run(c.policy, c);
    expect(Buffer.from(res.stream).equals(Buffer.from(r.fed))).toBe(true);
  });
  test('the run is lossless and the ledger balances to the byte', async () => {
    const { res } = await run(c.policy, c);
    expect([res.ledger.lost, imbalance(res.ledger), res.ledger.collected]).toEqual([[], 0, c.bytes]);
  });
  test('PMIs were taken and handled', async () => {
    const { res } = await run(c.policy, c);
    expect(res.pmis.length > 1 && res.pmis.every((p) => p.action === 'handled')).toBe(true);
  });
});

describe('branch-specific behaviour', () => {
  test('grow keeps one table while it has room, moving END down', async () => {
    const { m } = await run('grow', { regions: 3, bytes: 9000 });
    expect([m.tables.length, m.tables[0]!.endIndex]).toEqual([1, 6]);
  });
  test('grow chains a new table once the table is full', async () => {
    const { m } = await run('grow', { regions: 3, bytes: 40_000, tableEntries: 8 });
    expect(m.tables.length).toBeGreaterThan(1);
  });
  test('chain links the END of the current table to a new table on the first PMI', async () => {
    const { m } = await run('chain', { regions: 3, bytes: 9000 });
    const first = m.tables[0]!;
    const end = first.slots[first.endIndex]!;
    expect([m.tables.length, end.kind === 'end' && end.to === m.tables[1]]).toEqual([2, true]);
  });
  test('circular-fresh keeps one table and swaps filled regions for fresh ones', async () => {
    const { m } = await run('circular-fresh', { regions: 3, bytes: 40_000 });
    const distinct = new Set(m.placements.map((p) => p.region.base));
    expect([m.tables.length, distinct.size > 3, distinct.size]).toEqual([1, true, m.placements.length]);
  });
  test('protect-unread reuses its regions', async () => {
    const { m } = await run('protect-unread', { regions: 4, bytes: 40_000 });
    expect(new Set(m.placements.map((p) => p.region.base)).size).toBe(4);
  });
  test('single-entry keeps entry 1 an END to the table itself after every PMI', async () => {
    const { m } = await run('single-entry', { regions: 1, bytes: 20_000, chunk: 256, profile: 'broadwell' });
    const t = m.tables[0]!;
    expect([t.slots.length, t.slots[1]!.kind === 'end' && t.slots[1]!.to === t]).toEqual([2, true]);
  });
});

describe('a late reader', () => {
  test('protect-unread: the STOP entry cuts the trace; nothing written is lost, the cut is in the ledger', async () => {
    const r = await rig('skylake');
    const s = await TraceSession.open(r.target, { output: { scheme: 'topa', policy: 'protect-unread', regionSize: 4096, regions: 4 } });
    await s.start();
    await pump(r, undefined, 20_000); // PMIs are not handled: the ring fills up to the STOP entry
    const pending = r.pending.splice(0);
    for (const ev of pending) await s.onEvent(ev);
    const res = await s.stop(() => ({ written: r.out.written }));
    expect([res.ledger.collected, res.ledger.lost, imbalance(res.ledger)]).toEqual([16_384, [{ at: 16_384, bytes: null, reason: 'stop' }], 0]);
  });
  test('after a STOP the handler moves the pointer past the full region and tracing resumes', async () => {
    const r = await rig('skylake');
    const s = await TraceSession.open(r.target, { output: { scheme: 'topa', policy: 'protect-unread', regionSize: 4096, regions: 4 } });
    await s.start();
    await pump(r, undefined, 20_000);
    for (const ev of r.pending.splice(0)) await s.onEvent(ev);
    expect([r.sim.unit(0).triggerEn, (r.sim.unit(0).status >> 5n) & 1n]).toEqual([true, 0n]);
  });
});

describe('skid guard (docs/sdm/output.md §4.5)', () => {
  test.for(['grow', 'chain', 'circular-fresh'] as const)('%s: a PMI skid shorter than a region loses nothing', async (policy) => {
    const r = await rig('skylake', { topa: { pmiSkid: 3000 } });
    const s = await TraceSession.open(r.target, { output: { scheme: 'topa', policy, regionSize: 4096, regions: 3 } });
    await s.start();
    await pump(r, s, 40_000, 256);
    const res = await s.stop(() => ({ written: r.out.written }));
    expect([res.ledger.lost, Buffer.from(res.stream).equals(Buffer.from(r.fed))]).toEqual([[], true]);
  });
  test('grow: a skid longer than the guard region hits its STOP, and the ledger says so', async () => {
    const r = await rig('skylake', { topa: { pmiSkid: 6000 } });
    const s = await TraceSession.open(r.target, { output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 } });
    await s.start();
    await pump(r, s, 20_000, 256);
    const res = await s.stop(() => ({ written: r.out.written }));
    expect([res.ledger.lost[0]?.reason, imbalance(res.ledger)]).toEqual(['stop', 0]);
  });
});

describe('budget policy: the branch is chosen at each PMI', () => {
  const req = (budget: number): TraceRequest['output'] => ({ scheme: 'topa', policy: 'budget', regionSize: 4096, regions: 3, budget });
  test('a budget smaller than the first regions is refused before any MSR write', async () => {
    const r = await rig('skylake');
    const err = await TraceSession.open(r.target, { output: req(8192) }).catch((e: unknown) => e);
    expect([(err as { code?: string }).code, r.target.lines.filter((l) => l.op === 'wrmsr').length]).toEqual(['bad_config', 0]);
  });
  test('it grows while the budget allows, circularizes once, then reuses the ring; nothing lost', async () => {
    const r = await rig('skylake');
    const s = await TraceSession.open(r.target, { output: req(6 * 4096) });
    await s.start();
    await pump(r, s, 20 * 4096, 256);
    const res = await s.stop();
    const branches = s.pmis.map((p) => p.branch);
    expect([branches.slice(0, 2), branches.filter((b) => b === 'circularize').length, branches.at(-1), Buffer.from(res.stream).equals(Buffer.from(r.fed)), res.ledger.lost])
      .toEqual([['grow', 'circularize'], 1, 'ring', true, []]);
  });
});
