// RecordingTarget (DESIGN.md transcript.jsonl): one line per access in order, batches expanded,
// faults recorded with the fault text.
import { describe, expect, test } from 'vitest';
import { GeneralProtectionError } from '../../driver/errors.js';
import { rig } from './rig.js';

describe('RecordingTarget', () => {
  test('a batch becomes one line per executed op, with values and results in hex', async () => {
    const r = await rig('skylake');
    await r.target.msrBatch(0, [{ op: 'wrmsr', msr: 0x560, value: 0x10_0000n }, { op: 'rdmsr', msr: 0x560 }]);
    expect(r.target.lines).toEqual([
      { seq: 0, t_us: 0, cpu: 0, op: 'wrmsr', msr: '0x560', value: '0x100000' },
      { seq: 1, t_us: 0, cpu: 0, op: 'rdmsr', msr: '0x560', result: '0x100000' },
    ]);
  });
  test('a #GP inside a batch is one line with the fault text, and the batch stops there', async () => {
    const r = await rig('skylake');
    await r.target.msrBatch(0, [{ op: 'wrmsr', msr: 0x571, value: 1n << 3n }, { op: 'rdmsr', msr: 0x571 }]);
    expect([r.target.lines.length, r.target.lines[0]!.fault?.startsWith('#GP on WRMSR IA32_RTIT_STATUS (0x571) value 0x8')]).toEqual([1, true]);
  });
  test('a faulting single WRMSR is recorded and still throws', async () => {
    const r = await rig('skylake');
    const err = await r.target.wrmsr(0, 0x571, 1n << 3n).catch((e: unknown) => e);
    expect([err instanceof GeneralProtectionError, r.target.lines[0]!.op, typeof r.target.lines[0]!.fault]).toEqual([true, 'wrmsr', 'string']);
  });
  test('seq counts lines and the lines of one batch share a round trip', async () => {
    const r = await rig('skylake');
    await r.target.rdmsr(0, 0x570);
    await r.target.msrBatch(0, [{ op: 'rdmsr', msr: 0x570 }, { op: 'rdmsr', msr: 0x571 }]);
    expect([r.target.lines.map((l) => l.seq), r.target.roundTripOf]).toEqual([[0, 1, 2], [0, 1, 1]]);
  });
  test('cpuid, pmi-enable, xsaves and alloc are recorded', async () => {
    const r = await rig('skylake');
    await r.target.cpuid(0x14, 0, 0);
    await r.target.pmiEnable(0);
    await r.target.xsaves(0, 1n << 8n);
    await r.target.phys.alloc(4096, 4096);
    expect(r.target.lines.map((l) => l.op)).toEqual(['cpuid', 'pmi-enable', 'xsaves', 'alloc']);
  });
  test('t_us comes from the clock', async () => {
    const r = await rig('skylake');
    let t = 0;
    const { RecordingTarget } = await import('../../driver/transcript.js');
    const rec = new RecordingTarget(r.sim, () => (t += 5));
    await rec.rdmsr(0, 0x570);
    expect(rec.lines[0]!.t_us).toBe(5);
  });
  test('jsonl has one JSON object per line', async () => {
    const r = await rig('skylake');
    await r.target.rdmsr(0, 0x570);
    expect(JSON.parse(r.target.jsonl().trim())).toEqual({ seq: 0, t_us: 0, cpu: 0, op: 'rdmsr', msr: '0x570', result: '0x0' });
  });
});
