// Context switching (docs/sdm/xsave.md §2–§5): manual RDMSR/WRMSR with CTL first on save and last on
// restore; XSAVES/XRSTORS where CPUID.(0DH,1):EAX[3] and ECX[8] say so (refused otherwise); and a
// ToPA PMI pending across the switch, with and without PMI preservation.
import { describe, expect, test } from 'vitest';
import { ContextSwitcher } from '../../driver/context-switch.js';
import { UnsupportedError } from '../../driver/base/errors.js';
import type { TraceRequest } from '../../driver/request.js';
import { TraceSession } from '../../driver/session.js';
import { ops, pump, rig } from './rig.js';

const grow: TraceRequest['output'] = { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 };
const PEND_TOPA_PMI = 1n << 7n;

async function started(profile: 'skylake' | 'full' | 'kvm-guest', req: Partial<TraceRequest> = {}) {
  const r = await rig(profile);
  const s = await TraceSession.open(r.target, { output: grow, ...req });
  await s.start();
  return { r, s };
}

/** What another context leaves in the MSRs: its own (here: empty) trace state. */
async function otherContext(r: Awaited<ReturnType<typeof rig>>): Promise<void> {
  for (const [msr, v] of [[0x560, 0x40_0000n], [0x561, 0x7fn], [0x571, 0n]] as const) await r.sim.wrmsr(0, msr, v);
}

describe('manual switching (docs/sdm/xsave.md §5)', () => {
  test('save reads CTL, clears TraceEn, then reads the output state', async () => {
    const { r, s } = await started('skylake');
    const mark = r.target.lines.length;
    await new ContextSwitcher(s.io, s.probed.caps, 'manual', []).save();
    expect(ops(r, mark)).toEqual(['rdmsr 0x570', 'wrmsr 0x570', 'rdmsr 0x560', 'rdmsr 0x561', 'rdmsr 0x571']);
  });
  test('restore writes the output state, then CTL last, in one round trip', async () => {
    const { r, s } = await started('skylake');
    const cs = new ContextSwitcher(s.io, s.probed.caps, 'manual', []);
    const saved = await cs.save();
    const mark = r.target.lines.length;
    await cs.restore(saved);
    const lines = r.target.lines.slice(mark);
    expect([ops(r, mark), new Set(lines.map((l) => r.target.roundTripOf[l.seq])).size])
      .toEqual([['wrmsr 0x560', 'wrmsr 0x561', 'wrmsr 0x571', 'wrmsr 0x570'], 1]);
  });
  test('a round trip through another context gives back the exact state and tracing resumes', async () => {
    const { r, s } = await started('skylake');
    await pump(r, s, 3000);
    const cs = new ContextSwitcher(s.io, s.probed.caps, 'manual', []);
    const saved = await cs.save();
    const f = r.sim.unit(0);
    const before = [f.outputBase, f.maskPtrs, f.status];
    await otherContext(r);
    await cs.restore(saved);
    expect([[f.outputBase, f.maskPtrs, f.status & ~7n], f.triggerEn]).toEqual([[before[0], before[1], before[2]! & ~7n], true]);
  });
  test('a session with manual switching loses nothing across slices', async () => {
    const r = await rig('skylake');
    const s = await TraceSession.open(r.target, { output: grow, switching: 'manual' });
    await s.start();
    for (let i = 0; i < 5; i++) { await pump(r, s, 3000); await s.onEvent({ kind: 'slice', cpu: 0, branches: 100 }); }
    const res = await s.stop(() => ({ written: r.out.written }));
    expect([s.switches, Buffer.from(res.stream).equals(Buffer.from(r.fed)), res.ledger.lost]).toEqual([5, true, []]);
  });
});

describe('XSAVES switching (docs/sdm/xsave.md §2–§3)', () => {
  test('save is one XSAVES and stops tracing; restore is one XRSTORS and restarts it', async () => {
    const { r, s } = await started('skylake');
    const cs = new ContextSwitcher(s.io, s.probed.caps, 'xsaves', []);
    const mark = r.target.lines.length;
    const saved = await cs.save();
    const off = r.sim.unit(0).traceEn;
    await otherContext(r);
    await cs.restore(saved);
    expect([ops(r, mark), off, r.sim.unit(0).triggerEn]).toEqual([['xsaves', 'xrstors'], false, true]);
  });
  test('the restored pointers are the saved ones', async () => {
    const { r, s } = await started('skylake');
    await pump(r, s, 5000);
    const cs = new ContextSwitcher(s.io, s.probed.caps, 'xsaves', []);
    const saved = await cs.save();
    const want = [r.sim.unit(0).outputBase, r.sim.unit(0).maskPtrs];
    await otherContext(r);
    await cs.restore(saved);
    await r.sim.wrmsr(0, 0x570, r.sim.unit(0).ctl & ~1n);
    expect([r.sim.unit(0).outputBase, r.sim.unit(0).maskPtrs]).toEqual(want);
  });
  test.for([
    { profile: 'kvm-guest', bit: 'CPUID.(EAX=0DH,ECX=1):ECX[8]' },
    { profile: 'broadwell', bit: 'CPUID.(EAX=0DH,ECX=1):EAX[3]' },
  ] as const)('is refused on $profile, naming $bit', async ({ profile, bit }) => {
    const r = await rig(profile);
    const s = await TraceSession.open(r.target, { output: { scheme: 'topa', policy: 'single-entry', regionSize: 4096, regions: 1 } });
    let err: unknown;
    try { new ContextSwitcher(s.io, s.probed.caps, 'xsaves', []); } catch (e) { err = e; }
    expect([err instanceof UnsupportedError, (err as UnsupportedError).cpuid]).toEqual([true, bit]);
  });
});

describe('a ToPA PMI pending across the switch', () => {
  test('with preservation: ignored while switched out, raised again by XRSTORS, then handled and cleared', async () => {
    const { r, s } = await started('full', { InjectPsbPmiOnEnable: true });
    await pump(r, undefined, 8192 + 100); // INT region filled: PMI delivered, not yet handled
    const ev = r.pending.shift()!;
    const cs = new ContextSwitcher(s.io, s.probed.caps, 'xsaves', []);
    const saved = await cs.save(); // PendTopaPMI=1 goes into the image
    await s.onEvent({ ...ev, ctl: r.sim.unit(0).ctl }); // taken now: TraceEn=0 → ignored
    const delivered = r.sim.unit(0).deliveredPmis;
    await cs.restore(saved); // TraceEn 0→1 with PendTopaPMI=1: the PMI comes again
    const again = r.pending.shift()!;
    await s.onEvent(again);
    expect([s.pmis.map((p) => p.action), r.sim.unit(0).deliveredPmis - delivered, r.sim.unit(0).status & PEND_TOPA_PMI])
      .toEqual([['ignored-preserved', 'handled'], 1, 0n]);
  });
  test('without preservation (manual): GLOBAL_STATUS[55] survives the switch and the PMI is handled after restore', async () => {
    const { r, s } = await started('skylake');
    await pump(r, undefined, 8192 + 100);
    const ev = r.pending.shift()!;
    const cs = new ContextSwitcher(s.io, s.probed.caps, 'manual', []);
    await cs.restore(await cs.save());
    await s.onEvent(ev);
    await pump(r, s, 20_000);
    const res = await s.stop(() => ({ written: r.out.written }));
    expect([s.pmis[0]!.action, Buffer.from(res.stream).equals(Buffer.from(r.fed))]).toEqual(['handled', true]);
  });
});
