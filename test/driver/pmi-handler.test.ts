// The PMI handler's steps and PMI preservation (docs/sdm/output.md §7.2, §7.4): what it writes, in
// which order, in how many round trips; what it does when the top half already acked or stopped.
import { describe, expect, test } from 'vitest';
import type { PmiEvent } from '../../driver/pmi/handler.js';
import type { TraceRequest } from '../../driver/request.js';
import { TraceSession } from '../../driver/session.js';
import { ops, pump, rig, type Rig } from './rig.js';

const GS55 = 1n << 55n, PEND_TOPA_PMI = 1n << 7n, LVT_MASK = 1n << 16n;
const grow: TraceRequest['output'] = { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 };

/** A started session with one delivered, unhandled PMI (the INT region of entry 1 filled). */
async function withPendingPmi(profile: 'skylake' | 'full', req: Partial<TraceRequest> = {}): Promise<{ r: Rig; s: TraceSession; ev: PmiEvent }> {
  const r = await rig(profile);
  const s = await TraceSession.open(r.target, { output: grow, ...req });
  await s.start();
  await pump(r, undefined, 8192 + 100);
  const ev = r.pending.shift();
  if (!ev) throw new Error('no PMI was delivered');
  return { r, s, ev };
}

describe('handler steps', () => {
  test('stop+read, status+ack, unmask, restore: in this order', async () => {
    const { r, s, ev } = await withPendingPmi('skylake');
    const mark = r.target.lines.length;
    await s.onEvent(ev);
    expect(ops(r, mark).filter((o) => !/^(alloc|topa|note)/.test(o))).toEqual([
      'wrmsr 0x570', 'rdmsr 0x560', 'rdmsr 0x561', 'rdmsr 0x571', 'wrmsr 0x390', 'pmi-enable', 'wrmsr 0x570',
    ]);
  });
  test('the refill writes its ToPA entries while TraceEn=0, before CTL is restored', async () => {
    const { r, s, ev } = await withPendingPmi('skylake');
    const mark = r.target.lines.length;
    await s.onEvent(ev);
    const seq = ops(r, mark);
    const lastTopa = seq.map((o) => o.startsWith('topa')).lastIndexOf(true);
    expect([lastTopa > seq.indexOf('wrmsr 0x570'), lastTopa < seq.lastIndexOf('wrmsr 0x570')]).toEqual([true, true]);
  });
  test('a handled PMI costs three MSR round trips', async () => {
    const { s, ev } = await withPendingPmi('skylake');
    await s.onEvent(ev);
    expect(s.pmis[0]!.batches).toBe(3);
  });
  test('the restore writes back the CTL of the event, so tracing resumes', async () => {
    const { r, s, ev } = await withPendingPmi('skylake');
    await s.onEvent(ev);
    expect([r.sim.unit(0).ctl, r.sim.unit(0).triggerEn]).toEqual([ev.ctl, true]);
  });
  test('GLOBAL_STATUS[55] is cleared and the LVT entry unmasked', async () => {
    const { r, s, ev } = await withPendingPmi('skylake');
    await s.onEvent(ev);
    expect([r.sim.unit(0).globalStatus & GS55, r.sim.unit(0).lvtPmi & LVT_MASK]).toEqual([0n, 0n]);
  });
  test('an event the top half already acked is not acked again', async () => {
    const { r, s, ev } = await withPendingPmi('skylake');
    const mark = r.target.lines.length;
    await s.onEvent({ ...ev, acked: true });
    expect(ops(r, mark)).not.toContain('wrmsr 0x390');
  });
  test('when the top half cleared TraceEn the handler does not write CTL before reading', async () => {
    const { r, s, ev } = await withPendingPmi('skylake');
    await r.sim.wrmsr(0, 0x570, ev.ctl & ~1n); // the top half's stop
    const mark = r.target.lines.length;
    await s.onEvent({ ...ev, traceEnCleared: true });
    expect(ops(r, mark).slice(0, 2)).toEqual(['rdmsr 0x560', 'rdmsr 0x561']);
  });
  test('a PMI without GLOBAL_STATUS[55] is left alone', async () => {
    const { r, s, ev } = await withPendingPmi('skylake');
    const mark = r.target.lines.length;
    await s.onEvent({ ...ev, globalStatus: 0n });
    expect([ops(r, mark), s.pmis[0]!.action]).toEqual([[], 'not-topa']);
  });
  test('the trace-off window is recorded, with the meter the target gives', async () => {
    const r = await rig('skylake');
    let n = 0;
    const s = await TraceSession.open(r.target, { output: grow }, { meter: { read: () => ({ branches: (n += 10), bytes: n * 2 }) } });
    await s.start();
    await pump(r, s, 9000);
    expect(s.pmis[0]!.window?.model).toEqual({ branches: 10, bytes: 20 });
  });
});

describe('PMI preservation (docs/sdm/output.md §7.4)', () => {
  test('a PMI handled with TraceEn=1 clears PendTopaPMI', async () => {
    const { r, s, ev } = await withPendingPmi('full', { InjectPsbPmiOnEnable: true });
    const before = r.sim.unit(0).status & PEND_TOPA_PMI;
    await s.onEvent(ev);
    expect([before, r.sim.unit(0).status & PEND_TOPA_PMI]).toEqual([PEND_TOPA_PMI, 0n]);
  });
  test('PendTopaPMI is cleared before the LVT is unmasked', async () => {
    const { r, s, ev } = await withPendingPmi('full', { InjectPsbPmiOnEnable: true });
    const mark = r.target.lines.length;
    await s.onEvent(ev);
    const o = ops(r, mark);
    expect(o.indexOf('wrmsr 0x571')).toBeLessThan(o.indexOf('pmi-enable'));
  });
  test('a PMI taken with TraceEn=0 is acked, the LVT unmasked, and nothing else', async () => {
    const { r, s, ev } = await withPendingPmi('full', { InjectPsbPmiOnEnable: true });
    await r.sim.wrmsr(0, 0x570, ev.ctl & ~1n); // switched out before the PMI was taken
    const mark = r.target.lines.length;
    await s.onEvent({ ...ev, ctl: ev.ctl & ~1n });
    expect([ops(r, mark), s.pmis[0]!.action]).toEqual([['wrmsr 0x390', 'pmi-enable'], 'ignored-preserved']);
  });
  test('a PMI taken with TraceEn=0 leaves PendTopaPMI at 1', async () => {
    const { r, s, ev } = await withPendingPmi('full', { InjectPsbPmiOnEnable: true });
    await r.sim.wrmsr(0, 0x570, ev.ctl & ~1n);
    await s.onEvent({ ...ev, ctl: ev.ctl & ~1n });
    expect(r.sim.unit(0).status & PEND_TOPA_PMI).toBe(PEND_TOPA_PMI);
  });
  test('without preservation a PMI with TraceEn=0 is handled (tables refilled) and CTL is not restored', async () => {
    const { r, s, ev } = await withPendingPmi('skylake');
    await r.sim.wrmsr(0, 0x570, ev.ctl & ~1n);
    const mark = r.target.lines.length;
    await s.onEvent({ ...ev, ctl: ev.ctl & ~1n });
    expect([s.pmis[0]!.action, ops(r, mark).filter((o) => o === 'wrmsr 0x570')]).toEqual(['handled', []]);
  });
});
