// RecordingTarget (docs/design.md transcript.jsonl): one line per access in order, batches expanded,
// faults recorded with the fault text.
import { describe, expect, test } from 'vitest';
import { GeneralProtectionError } from '../../driver/hw/cpu-fault.js';
import { END, INT, rig, STOP } from '../driver/rig.js';

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
  test('a ToPA table write becomes one topa line per changed entry, with its table, index and decoded entry', async () => {
    const r = await rig('skylake');
    const t = await r.target.phys.alloc(4096, 4096), reg = await r.target.phys.alloc(4096, 4096);
    const table = (entries: bigint[]): Uint8Array => {
      const b = new Uint8Array(entries.length * 8);
      entries.forEach((e, i) => new DataView(b.buffer).setBigUint64(i * 8, e, true));
      return b;
    };
    await r.target.phys.write(t.base, table([reg.base | INT, t.base | END]), { content: 'topa-table' });
    await r.target.phys.write(t.base, table([reg.base | INT | STOP, t.base | END]), { content: 'topa-table' });
    const topa = r.target.lines.filter((l) => l.op === 'topa').map(({ addr, index, entry }) => ({ addr, index, entry }));
    const h = (v: bigint): string => `0x${v.toString(16)}`;
    expect(topa).toEqual([
      { addr: h(t.base), index: 0, entry: `output ${h(reg.base)} 4K INT` },
      { addr: h(t.base), index: 1, entry: `END → ${h(t.base)}` },
      { addr: h(t.base), index: 0, entry: `output ${h(reg.base)} 4K INT STOP` },
    ]);
  });
  test('a table page allocated again is recorded whole again (it is zero-filled)', async () => {
    const r = await rig('skylake');
    const t = await r.target.phys.alloc(4096, 4096);
    const one = new Uint8Array(8);
    new DataView(one.buffer).setBigUint64(0, t.base | END, true);
    await r.target.phys.write(t.base, one, { content: 'topa-table' });
    await r.target.phys.free(t);
    const again = await r.target.phys.alloc(4096, 4096);
    await r.target.phys.write(again.base, one, { content: 'topa-table' });
    expect([again.base, r.target.lines.filter((l) => l.op === 'topa').length]).toEqual([t.base, 2]);
  });
  test('other writes are recorded by address and size', async () => {
    const r = await rig('skylake');
    const m = await r.target.phys.alloc(4096, 4096);
    await r.target.phys.write(m.base + 16n, new Uint8Array(5));
    expect(r.target.lines.at(-1)).toMatchObject({ op: 'write', cpu: -1, addr: `0x${(m.base + 16n).toString(16)}`, value: '5 bytes' });
  });
  test('XSAVES and XRSTORS lines carry the 9 MSRs of component 8 by name', async () => {
    const r = await rig('full');
    await r.target.wrmsr(0, 0x560, 0x20_0000n);
    const area = await r.target.xsaves(0, 1n << 8n);
    await r.target.xrstors(0, area, 1n << 8n);
    const [xs, xr] = r.target.lines.slice(-2);
    expect([xs!.area?.IA32_RTIT_OUTPUT_BASE, xr!.area?.IA32_RTIT_OUTPUT_BASE, Object.keys(xs!.area ?? {}).length]).toEqual(['0x200000', '0x200000', 9]);
  });
  test('t_us comes from the clock', async () => {
    const r = await rig('skylake');
    let t = 0;
    const { RecordingTarget } = await import('../../harness/rundir/recording-target.js');
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
