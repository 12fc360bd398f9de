// The enable and disable sequences (docs/sdm/msrs.md, docs/sdm/xsave.md §5 notes): their
// order and their single round trip, read from the transcript; the write cache; #GP as a typed
// error naming the step.
import { describe, expect, test } from 'vitest';
import { StepFaultError } from '../../driver/io.js';
import type { TraceRequest } from '../../driver/request.js';
import { TraceSession } from '../../driver/session.js';
import { ops, rig } from './rig.js';

const req: TraceRequest = {
  output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 },
  CR3_MATCH: 0x5000n,
  ranges: [{ role: 'filter', a: 0x1000_0000n, b: 0x1000_ffffn }],
};

async function opened(r: Awaited<ReturnType<typeof rig>>, q: TraceRequest = req) {
  const s = await TraceSession.open(r.target, q);
  return { s, mark: r.target.lines.length };
}

describe('enable sequence', () => {
  test('TraceEn=0, STATUS=0, OUTPUT_BASE, OUTPUT_MASK_PTRS, CR3_MATCH, ADDR0_A/B, CTL with TraceEn=1', async () => {
    const r = await rig('skylake');
    const { s, mark } = await opened(r);
    await s.start();
    expect(ops(r, mark)).toEqual([
      'pmi-enable', 'wrmsr 0x570', 'wrmsr 0x571', 'wrmsr 0x560', 'wrmsr 0x561', 'wrmsr 0x572', 'wrmsr 0x580', 'wrmsr 0x581', 'wrmsr 0x570',
    ]);
  });
  test('the MSR writes are one round trip', async () => {
    const r = await rig('skylake');
    const { s, mark } = await opened(r);
    await s.start();
    const rts = r.target.lines.slice(mark).filter((l) => l.op === 'wrmsr').map((l) => r.target.roundTripOf[l.seq]);
    expect(new Set(rts).size).toBe(1);
  });
  test('the first write clears TraceEn and the last sets it, with ToPA and ADDR0_CFG=1', async () => {
    const r = await rig('skylake');
    const { s, mark } = await opened(r);
    await s.start();
    const ctl = r.target.lines.slice(mark).filter((l) => l.msr === '0x570').map((l) => l.value);
    // User(3) ToPA(8) CR3Filter(7) BranchEn(13) ADDR0_CFG=1 (35:32); TraceEn(0) only in the last.
    expect(ctl).toEqual(['0x100002188', '0x100002189']);
  });
  test('tracing is on afterwards (TriggerEn=1)', async () => {
    const r = await rig('skylake');
    const { s } = await opened(r);
    await s.start();
    expect(r.sim.unit(0).triggerEn).toBe(true);
  });
});

describe('disable sequence', () => {
  test('TraceEn=0, CTL read back, then STATUS, OUTPUT_BASE, OUTPUT_MASK_PTRS are read, in one round trip', async () => {
    const r = await rig('skylake');
    const { s } = await opened(r);
    await s.start();
    const mark = r.target.lines.length;
    await s.programmer.disable();
    const lines = r.target.lines.slice(mark);
    expect([ops(r, mark), new Set(lines.map((l) => r.target.roundTripOf[l.seq])).size])
      .toEqual([['wrmsr 0x570', 'rdmsr 0x570', 'rdmsr 0x571', 'rdmsr 0x560', 'rdmsr 0x561'], 1]);
  });
  test('enable writes TraceEn=0, STATUS, both output pointers, CR3_MATCH and the range, then CTL with TraceEn=1', async () => {
    const r = await rig('skylake');
    const { s } = await opened(r);
    const mark = r.target.lines.length;
    await s.start();
    expect(ops(r, mark).filter((o) => o.startsWith('wrmsr'))).toEqual(['wrmsr 0x570', 'wrmsr 0x571', 'wrmsr 0x560', 'wrmsr 0x561', 'wrmsr 0x572', 'wrmsr 0x580', 'wrmsr 0x581', 'wrmsr 0x570']);
  });
});

// BranchEn=0 on Broadwell (erratum BDM106) no longer gets this far: the request check refuses it
// (test/driver/probe.test.ts). The #GP here is VMX's: the CPU enters VMX operation after the open,
// and Broadwell's IA32_VMX_MISC[14] = 0 forbids TraceEn=1 there (docs/sdm/msrs.md §3.3 rule 9).
describe('#GP in a sequence', () => {
  async function startInVmx(): Promise<StepFaultError> {
    const r = await rig('broadwell');
    const s = await TraceSession.open(r.target, { output: { scheme: 'topa', policy: 'single-entry', regionSize: 4096, regions: 1 } });
    r.sim.unit(0).vmxon();
    return await s.start().catch((e: unknown) => e) as StepFaultError;
  }
  test('becomes a GeneralProtectionError naming the MSR, the value and the step (VMX operation)', async () => {
    const err = await startInVmx();
    // User(3) ToPA(8) BranchEn(13) TraceEn(0).
    expect([err instanceof StepFaultError, err.msr, err.value, err.step, err.message.split(': ').slice(0, 3)]).toEqual([
      true, 0x570, 0x2109n, 'enable: CTL with TraceEn=1',
      ['#GP on WRMSR IA32_RTIT_CTL (0x570) value 0x2109', 'enable', 'CTL with TraceEn=1'],
    ]);
  });
  test("the model's reason (IA32_VMX_MISC[14]) is kept in the message", async () => {
    const err = await startInVmx();
    expect(err.message).toContain('IA32_VMX_MISC[14]');
  });
});
