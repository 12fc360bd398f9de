// What successful MSR accesses do: reset values, read-only bits, STATUS write semantics,
// MASK_PTRS bits 6:0, GLOBAL_STATUS reset/set, IA32_XSS, LVT PMI, TraceEn transitions
// (docs/sdm/msrs.md §1, §3.4, §4, §6, §11, §12; docs/sdm/output.md §7.4).
import { describe, expect, test } from 'vitest';
import type { OutputPort } from '../../harness/sim/msr-file.js';
import { CTL_TOPA_OFF, CTL_TOPA_ON, msrFile, rdRule, wrRule } from './helpers.js';

const read = (f: ReturnType<typeof msrFile>, msr: number): bigint => {
  const r = f.read(msr);
  if (!r.ok) throw new Error(r.fault.reason);
  return r.value;
};

describe('reset values (docs/sdm/msrs.md §1, §11.1, §12)', () => {
  test.for([
    { msr: 0x570, want: 0n }, { msr: 0x571, want: 0n }, { msr: 0x560, want: 0n }, { msr: 0x561, want: 0x7fn },
    { msr: 0x572, want: 0n }, { msr: 0x580, want: 0n }, { msr: 0x587, want: 0n }, { msr: 0x38e, want: 0n },
    { msr: 0xda0, want: 0n }, { msr: 0x834, want: 0x1_0000n },
  ])('MSR 0x$msr reads $want after reset (full)', ({ msr, want }) => {
    expect(read(msrFile('full'), msr)).toBe(want);
  });
});

describe('OUTPUT_MASK_PTRS bits 6:0 always read 1 (docs/sdm/msrs.md §6)', () => {
  test.for([
    { value: 0n, want: 0x7fn },
    { value: 0x80n, want: 0xffn },
    { value: 0x0000_1234_0000_0100n, want: 0x0000_1234_0000_017fn },
    { value: 0xffff_ffff_ffff_ff80n, want: 0xffff_ffff_ffff_ffffn },
  ])('writing $value reads back $want', ({ value, want }) => {
    const f = msrFile('skylake');
    f.write(0x561, value);
    expect(read(f, 0x561)).toBe(want);
  });
});

describe('STATUS write semantics (docs/sdm/msrs.md §4)', () => {
  test('writes to FilterEn, ContextEn and TriggerEn are ignored', () => {
    const f = msrFile('skylake');
    f.write(0x571, 0x7n);
    expect(read(f, 0x571)).toBe(0n);
  });
  test('Error, Stopped and PacketByteCnt are written as given', () => {
    const f = msrFile('skylake');
    f.write(0x571, (0x1234n << 32n) | 0x30n);
    expect(read(f, 0x571)).toBe((0x1234n << 32n) | 0x30n);
  });
  test('writing 0 does not clear ContextEn left over from the last trace (bits 0–2 read-only)', () => {
    const f = msrFile('skylake');
    f.write(0x570, CTL_TOPA_ON);
    f.write(0x570, CTL_TOPA_OFF);
    f.write(0x571, 0n);
    expect(read(f, 0x571) & 0x2n).toBe(0x2n);
  });
  test('PendPSB and PendTopaPMI are written as given when EBX[6]=1', () => {
    const f = msrFile('full');
    f.write(0x571, 0xc0n);
    expect(read(f, 0x571)).toBe(0xc0n);
  });
});

describe('TraceEn 0→1 (docs/sdm/msrs.md §3.4, docs/sdm/README.md §2)', () => {
  test('with Stopped=0 and Error=0 it sets TriggerEn', () => {
    const f = msrFile('skylake');
    f.write(0x570, CTL_TOPA_ON);
    expect(read(f, 0x571) & 0x4n).toBe(0x4n);
  });
  test('with Stopped=1 TriggerEn stays 0 and the write succeeds', () => {
    const f = msrFile('skylake');
    f.write(0x571, 0x20n);
    expect(wrRule(f, 0x570, CTL_TOPA_ON)).toBe('ok');
    expect(read(f, 0x571)).toBe(0x20n);
  });
  test('with Error=1 TriggerEn stays 0 and the write succeeds', () => {
    const f = msrFile('skylake');
    f.write(0x571, 0x10n);
    expect(wrRule(f, 0x570, CTL_TOPA_ON)).toBe('ok');
    expect(read(f, 0x571)).toBe(0x10n);
  });
  test('OS=1 at CPL 0 sets ContextEn; no filter range sets FilterEn', () => {
    const f = msrFile('skylake');
    f.write(0x570, CTL_TOPA_ON);
    expect(read(f, 0x571) & 0x7n).toBe(0x7n);
  });
  test('OS=0 at CPL 0 leaves ContextEn 0', () => {
    const f = msrFile('skylake');
    f.write(0x570, 0x2109n); // TraceEn|User|ToPA|BranchEn
    expect(read(f, 0x571) & 0x2n).toBe(0n);
  });
  test('CR3Filter with a CR3 that differs in bits 63:12 leaves ContextEn 0', () => {
    const f = msrFile('skylake');
    f.write(0x572, 0x5000n);
    f.context = { cpl: 0, cr3: 0x6000n, pae: false, nextIp: 0n };
    f.write(0x570, CTL_TOPA_ON | 0x80n);
    expect(read(f, 0x571) & 0x2n).toBe(0n);
  });
  test('CR3Filter ignores CR3 bits 11:0 (PCID)', () => {
    const f = msrFile('skylake');
    f.write(0x572, 0x5000n);
    f.context = { cpl: 0, cr3: 0x5fffn, pae: false, nextIp: 0n };
    f.write(0x570, CTL_TOPA_ON | 0x80n);
    expect(read(f, 0x571) & 0x2n).toBe(0x2n);
  });
  test('a filter range that does not hold Next IP leaves FilterEn 0', () => {
    const f = msrFile('skylake');
    f.write(0x580, 0x1000n);
    f.write(0x581, 0x1fffn);
    f.context = { cpl: 0, cr3: 0n, pae: false, nextIp: 0x2000n };
    f.write(0x570, CTL_TOPA_ON | (1n << 32n));
    expect(read(f, 0x571) & 0x1n).toBe(0n);
  });
  test('a filter range whose inclusive limit is Next IP sets FilterEn', () => {
    const f = msrFile('skylake');
    f.write(0x580, 0x1000n);
    f.write(0x581, 0x1fffn);
    f.context = { cpl: 0, cr3: 0n, pae: false, nextIp: 0x1fffn };
    f.write(0x570, CTL_TOPA_ON | (1n << 32n));
    expect(read(f, 0x571) & 0x1n).toBe(1n);
  });
  test('Broadwell has no FilterEn bit: bit 0 stays 0', () => {
    const f = msrFile('broadwell');
    f.write(0x570, CTL_TOPA_ON);
    expect(read(f, 0x571)).toBe(0x6n);
  });
  test('the output port is loaded from OUTPUT_BASE and OUTPUT_MASK_PTRS', () => {
    const f = msrFile('skylake');
    const seen: bigint[] = [];
    f.output = { enable: (m) => { seen.push(m.outputBase, m.maskPtrs); }, disable: () => ({ outputBase: 0n, maskPtrs: 0n }) };
    f.write(0x560, 0x10_0000n);
    f.write(0x561, 0x180n);
    f.write(0x570, CTL_TOPA_ON);
    expect(seen).toEqual([0x10_0000n, 0x1ffn]);
  });
  test('with Stopped=1 the output port is not started', () => {
    const f = msrFile('skylake');
    let started = 0;
    f.output = { enable: () => { started++; }, disable: () => ({ outputBase: 0n, maskPtrs: 0n }) };
    f.write(0x571, 0x20n);
    f.write(0x570, CTL_TOPA_ON);
    expect(started).toBe(0);
  });
});

describe('TraceEn 1→0 (docs/sdm/msrs.md §3.4, docs/sdm/output.md §2)', () => {
  const port = (): OutputPort => ({ enable: () => {}, disable: () => ({ outputBase: 0x20_3000n, maskPtrs: (0x40n << 32n) | (2n << 7n) }) });
  test('clears TriggerEn and keeps ContextEn and FilterEn (Open Question 15)', () => {
    const f = msrFile('skylake');
    f.write(0x570, CTL_TOPA_ON);
    f.write(0x570, CTL_TOPA_OFF);
    expect(read(f, 0x571) & 0x7n).toBe(0x3n);
  });
  test('writes the output pointers back to OUTPUT_BASE and OUTPUT_MASK_PTRS', () => {
    const f = msrFile('skylake');
    f.output = port();
    f.write(0x570, CTL_TOPA_ON);
    f.write(0x570, CTL_TOPA_OFF);
    expect([read(f, 0x560), read(f, 0x561)]).toEqual([0x20_3000n, (0x40n << 32n) | 0x17fn]);
  });
  test('writing back the same CTL with TraceEn=1 is a no-op (no write-back)', () => {
    const f = msrFile('skylake');
    f.output = port();
    f.write(0x570, CTL_TOPA_ON);
    f.write(0x570, CTL_TOPA_ON);
    expect(read(f, 0x560)).toBe(0n);
  });
  test('warm reset with IP filtering clears only TraceEn', () => {
    const f = msrFile('skylake');
    f.write(0x572, 0x3000n);
    f.write(0x570, CTL_TOPA_ON);
    f.warmReset();
    expect([read(f, 0x570), read(f, 0x572)]).toEqual([CTL_TOPA_OFF, 0x3000n]);
  });
  test('warm reset without IP filtering clears every RTIT MSR (Broadwell)', () => {
    const f = msrFile('broadwell');
    f.write(0x572, 0x3000n);
    f.write(0x570, CTL_TOPA_ON);
    f.warmReset();
    expect([read(f, 0x570), read(f, 0x572), read(f, 0x561)]).toEqual([0n, 0n, 0x7fn]);
  });
});

describe('IA32_PERF_GLOBAL_STATUS and its RESET/SET MSRs (docs/sdm/msrs.md §11)', () => {
  test('GLOBAL_STATUS is read-only', () => {
    expect(wrRule(msrFile('skylake'), 0x38e, 1n << 55n)).toBe('PERF_GLOBAL_STATUS.read-only');
  });
  test('_SET bit 55 sets Trace_ToPA_PMI', () => {
    const f = msrFile('skylake');
    f.write(0x391, 1n << 55n);
    expect(read(f, 0x38e)).toBe(1n << 55n);
  });
  test('_RESET bit 55 clears Trace_ToPA_PMI', () => {
    const f = msrFile('skylake');
    f.write(0x391, 1n << 55n);
    f.write(0x390, 1n << 55n);
    expect(read(f, 0x38e)).toBe(0n);
  });
  test('_RESET with 0 changes nothing', () => {
    const f = msrFile('skylake');
    f.write(0x391, 1n << 55n);
    f.write(0x390, 0n);
    expect(read(f, 0x38e)).toBe(1n << 55n);
  });
  test.for([
    { cpu: 'broadwell', want: 'G2' },
    { cpu: 'kvm-guest', want: 'G2' },
    { cpu: 'skylake', want: 'ok' },
  ] as const)('_SET exists only with PerfMon version > 3: $cpu gives $want', ({ cpu, want }) => {
    expect(wrRule(msrFile(cpu), 0x391, 1n << 55n)).toBe(want);
  });
  test('_RESET exists with PerfMon version 2 (kvm-guest)', () => {
    expect(wrRule(msrFile('kvm-guest'), 0x390, 1n << 55n)).toBe('ok');
  });
});

describe('IA32_XSS 0xDA0 (docs/sdm/msrs.md §12)', () => {
  test.for([
    { cpu: 'broadwell', value: 0n, want: 'G2', label: 'no XSAVES' },
    { cpu: 'skylake', value: 0x100n, want: 'ok', label: 'bit 8 with 0DH,1 ECX[8]' },
    { cpu: 'kvm-guest', value: 0x100n, want: 'XSS.reserved', label: 'bit 8 without 0DH,1 ECX[8] (KVM)' },
    { cpu: 'skylake', value: 0x1n, want: 'XSS.reserved', label: 'bit 0 (not a supervisor component)' },
  ] as const)('$label on $cpu gives $want', ({ cpu, value, want }) => {
    expect(wrRule(msrFile(cpu), 0xda0, value)).toBe(want);
  });
  test('broadwell has no IA32_XSS to read', () => {
    expect(rdRule(msrFile('broadwell'), 0xda0)).toBe('G2');
  });
});

describe('ToPA PMI and the LVT entry (docs/sdm/msrs.md §11.1, docs/sdm/output.md §7.4)', () => {
  test('a PMI sets GLOBAL_STATUS[55] and masks the LVT entry', () => {
    const f = msrFile('skylake');
    f.write(0x834, 0xfen);
    f.topaIntFilled();
    expect([read(f, 0x38e), read(f, 0x834), f.deliveredPmis]).toEqual([1n << 55n, 0x1_00fen, 1]);
  });
  test('a PMI while the LVT entry is masked is not delivered but GLOBAL_STATUS[55] is set', () => {
    const f = msrFile('skylake');
    f.topaIntFilled();
    expect([read(f, 0x38e), f.deliveredPmis, f.maskedPmis]).toEqual([1n << 55n, 0, 1]);
  });
  test('INT fill with InjectPsbPmiOnEnable=1 sets PendTopaPMI', () => {
    const f = msrFile('full');
    f.write(0x570, CTL_TOPA_ON | (1n << 56n));
    f.topaIntFilled();
    expect(read(f, 0x571) & 0x80n).toBe(0x80n);
  });
  test('INT fill without InjectPsbPmiOnEnable leaves PendTopaPMI 0', () => {
    const f = msrFile('full');
    f.write(0x570, CTL_TOPA_ON);
    f.topaIntFilled();
    expect(read(f, 0x571) & 0x80n).toBe(0n);
  });
  test('TraceEn 0→1 with PendTopaPMI=1 and InjectPsbPmiOnEnable=1 raises the PMI again', () => {
    const f = msrFile('full');
    f.write(0x834, 0xfen);
    f.write(0x571, 0x80n);
    f.write(0x570, CTL_TOPA_ON | (1n << 56n));
    expect([f.deliveredPmis, read(f, 0x38e), read(f, 0x571) & 0x80n]).toEqual([1, 1n << 55n, 0x80n]);
  });
  test('TraceEn 0→1 with PendTopaPMI=1 but InjectPsbPmiOnEnable=0 raises nothing', () => {
    const f = msrFile('full');
    f.write(0x834, 0xfen);
    f.write(0x571, 0x80n);
    f.write(0x570, CTL_TOPA_ON);
    expect([f.deliveredPmis, read(f, 0x38e)]).toEqual([0, 0n]);
  });
  test('LVT Delivery Status (bit 12) is read-only', () => {
    const f = msrFile('skylake');
    f.write(0x834, 0x1_10fen);
    expect(read(f, 0x834)).toBe(0x1_00fen);
  });
  test('LVT reserved bits raise #GP', () => {
    expect(wrRule(msrFile('skylake'), 0x834, 1n << 17n)).toBe('LVT.reserved');
  });
});
