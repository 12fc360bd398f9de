// docs/sdm/msrs.md §9 "Complete #GP checklist (WRMSR)", one test per row and per profile where it
// differs, plus the RDMSR rule (G1, G2, G5 only) and G6 (a faulting write changes nothing).
import { describe, expect, test } from 'vitest';
import type { CpuProfile, ProfileName } from '../../harness/sim/profiles.js';
import { CTL_TOPA_ON, msrFile, rdRule, snapshot, VARIANTS, wrRule } from './helpers.js';

type Cpu = ProfileName | CpuProfile;
const on = (c: Cpu) => (typeof c === 'string' ? c : c.name);
type Row = { cpu: Cpu; msr: number; value: bigint; want: string; label: string };
const named = (rows: Row[]) => rows.map((r) => ({ ...r, on: on(r.cpu) }));

const RTIT = [0x560, 0x561, 0x570, 0x571, 0x572, 0x580, 0x581, 0x582, 0x583, 0x584, 0x585, 0x586, 0x587];

describe('any RTIT MSR: no PT, MSR not enumerated, CPL>0', () => {
  test.for(RTIT)('WRMSR 0x%s without Intel PT raises #GP (G1)', (msr) => {
    expect(wrRule(msrFile(VARIANTS.noPt), msr, 0n)).toBe('G1');
  });
  test.for(RTIT)('RDMSR 0x%s without Intel PT raises #GP (G1)', (msr) => {
    expect(rdRule(msrFile(VARIANTS.noPt), msr)).toBe('G1');
  });
  test.for(named([
    { cpu: 'broadwell', msr: 0x580, value: 0n, want: 'G2', label: 'ADDR0_A without IP filtering' },
    { cpu: 'skylake', msr: 0x583, value: 0n, want: 'ok', label: 'ADDR1_B with RANGECNT 2' },
    { cpu: 'skylake', msr: 0x584, value: 0n, want: 'G2', label: 'ADDR2_A with RANGECNT 2' },
    { cpu: 'kvm-guest', msr: 0x587, value: 0n, want: 'G2', label: 'ADDR3_B with RANGECNT 2' },
    { cpu: 'full', msr: 0x587, value: 0n, want: 'ok', label: 'ADDR3_B with RANGECNT 4' },
    { cpu: VARIANTS.noCr3, msr: 0x572, value: 0n, want: 'G2', label: 'CR3_MATCH without CR3 filtering' },
    { cpu: VARIANTS.fabricOnly, msr: 0x560, value: 0n, want: 'G2', label: 'OUTPUT_BASE with neither ToPA nor single range' },
    { cpu: VARIANTS.fabricOnly, msr: 0x561, value: 0n, want: 'G2', label: 'OUTPUT_MASK_PTRS with neither ToPA nor single range' },
    { cpu: 'broadwell', msr: 0x560, value: 0n, want: 'ok', label: 'OUTPUT_BASE with ToPA only' },
  ]))('$label on $on: WRMSR gives $want and RDMSR agrees (G2)', ({ cpu, msr, value, want }) => {
    expect(wrRule(msrFile(cpu), msr, value)).toBe(want);
    expect(rdRule(msrFile(cpu), msr)).toBe(want);
  });
  test.for([0x570, 0x571, 0x560])('WRMSR and RDMSR 0x%s at CPL 3 raise #GP (G5)', (msr) => {
    const f = msrFile('skylake');
    f.env = { cpl: 3, inVmxOperation: false };
    expect(wrRule(f, msr, 0n)).toBe('G5');
    expect(rdRule(f, msr)).toBe('G5');
  });
});

describe('every non-CTL RTIT MSR: TraceEn=1 (G3)', () => {
  test.for(named([
    { cpu: 'skylake', msr: 0x571, value: 0n, want: 'G3', label: 'STATUS' },
    { cpu: 'skylake', msr: 0x560, value: 0x1000n, want: 'G3', label: 'OUTPUT_BASE' },
    { cpu: 'skylake', msr: 0x561, value: 0x7fn, want: 'G3', label: 'OUTPUT_MASK_PTRS' },
    { cpu: 'skylake', msr: 0x572, value: 0n, want: 'G3', label: 'CR3_MATCH' },
    { cpu: 'skylake', msr: 0x580, value: 0n, want: 'G3', label: 'ADDR0_A' },
    { cpu: 'skylake', msr: 0x583, value: 0n, want: 'G3', label: 'ADDR1_B' },
    { cpu: 'broadwell', msr: 0x571, value: 0n, want: 'G3', label: 'STATUS' },
  ]))('WRMSR $label with TraceEn=1 on $on raises #GP', ({ cpu, msr, value, want }) => {
    const f = msrFile(cpu);
    expect(f.write(0x570, CTL_TOPA_ON)).toBeUndefined();
    expect(wrRule(f, msr, value)).toBe(want);
  });
  test('RDMSR of STATUS with TraceEn=1 does not fault', () => {
    const f = msrFile('skylake');
    f.write(0x570, CTL_TOPA_ON);
    expect(rdRule(f, 0x571)).toBe('ok');
  });
});

describe('STATUS 0x571 value rules', () => {
  test.for(named([
    { cpu: 'skylake', msr: 0x571, value: 0x8n, want: 'STATUS.reserved', label: 'bit 3' },
    { cpu: 'skylake', msr: 0x571, value: 0x100n, want: 'STATUS.reserved', label: 'bit 8' },
    { cpu: 'skylake', msr: 0x571, value: 1n << 31n, want: 'STATUS.reserved', label: 'bit 31' },
    { cpu: 'skylake', msr: 0x571, value: 1n << 49n, want: 'STATUS.reserved', label: 'bit 49' },
    { cpu: 'skylake', msr: 0x571, value: 1n << 63n, want: 'STATUS.reserved', label: 'bit 63' },
    { cpu: 'skylake', msr: 0x571, value: 0x40n, want: 'STATUS.reserved', label: 'PendPSB without EBX[6]' },
    { cpu: 'skylake', msr: 0x571, value: 0x80n, want: 'STATUS.reserved', label: 'PendTopaPMI without EBX[6]' },
    { cpu: 'full', msr: 0x571, value: 0xc0n, want: 'ok', label: 'PendPSB|PendTopaPMI with EBX[6]' },
    { cpu: 'kvm-guest', msr: 0x571, value: 0x80n, want: 'STATUS.reserved', label: 'PendTopaPMI (KVM)' },
    { cpu: VARIANTS.kvmClaimsAll, msr: 0x571, value: 0x40n, want: 'KVM.STATUS', label: 'PendPSB although leaf 14H says EBX[6] (KVM status mask)' },
    { cpu: 'broadwell', msr: 0x571, value: 1n << 32n, want: 'STATUS.PacketByteCnt', label: 'PacketByteCnt=1 without EBX[1]' },
    { cpu: 'skylake', msr: 0x571, value: 0x1_ffffn << 32n, want: 'ok', label: 'PacketByteCnt=0x1FFFF with EBX[1]' },
    { cpu: 'skylake', msr: 0x571, value: 0x30n, want: 'ok', label: 'Error|Stopped' },
    { cpu: 'broadwell', msr: 0x571, value: 0x7n, want: 'ok', label: 'bits 0–2 (writes ignored, no #GP)' },
  ]))('$label on $on gives $want', ({ cpu, msr, value, want }) => {
    expect(wrRule(msrFile(cpu), msr, value)).toBe(want);
  });
});

describe('OUTPUT_BASE 0x560 value rules', () => {
  test.for(named([
    { cpu: 'skylake', msr: 0x560, value: 0x1n, want: 'OUTPUT_BASE.reserved', label: 'bit 0' },
    { cpu: 'skylake', msr: 0x560, value: 0x40n, want: 'OUTPUT_BASE.reserved', label: 'bit 6' },
    { cpu: 'skylake', msr: 0x560, value: 0x80n, want: 'ok', label: 'bit 7 (128-byte aligned)' },
    { cpu: 'skylake', msr: 0x560, value: 1n << 38n, want: 'ok', label: 'bit 38 (MAXPHYADDR 39)' },
    { cpu: 'skylake', msr: 0x560, value: 1n << 39n, want: 'OUTPUT_BASE.MAXPHYADDR', label: 'bit 39 (MAXPHYADDR 39)' },
    { cpu: 'broadwell', msr: 0x560, value: 1n << 45n, want: 'ok', label: 'bit 45 (MAXPHYADDR 46)' },
    { cpu: 'broadwell', msr: 0x560, value: 1n << 46n, want: 'OUTPUT_BASE.MAXPHYADDR', label: 'bit 46 (MAXPHYADDR 46)' },
    { cpu: 'full', msr: 0x560, value: 1n << 51n, want: 'ok', label: 'bit 51 (MAXPHYADDR 52)' },
    { cpu: 'full', msr: 0x560, value: 1n << 63n, want: 'OUTPUT_BASE.MAXPHYADDR', label: 'bit 63 (MAXPHYADDR 52)' },
  ]))('$label on $on gives $want', ({ cpu, msr, value, want }) => {
    expect(wrRule(msrFile(cpu), msr, value)).toBe(want);
  });
});

describe('OUTPUT_MASK_PTRS 0x561 has no value rule', () => {
  test.for([0n, 0xffff_ffff_ffff_ffffn, 0x1234_5678_0000_0080n])('WRMSR 0x561 := %s does not fault', (value) => {
    expect(wrRule(msrFile('skylake'), 0x561, value)).toBe('ok');
  });
});

describe('CR3_MATCH 0x572 value rules', () => {
  test.for(named([
    { cpu: 'skylake', msr: 0x572, value: 0x1n, want: 'CR3_MATCH.reserved', label: 'bit 0' },
    { cpu: 'skylake', msr: 0x572, value: 0x10n, want: 'CR3_MATCH.reserved', label: 'bit 4' },
    { cpu: 'skylake', msr: 0x572, value: 0x20n, want: 'ok', label: 'bit 5' },
    { cpu: 'skylake', msr: 0x572, value: 0xffff_ffff_ffff_ffe0n, want: 'ok', label: 'bits 63:5 (no MAXPHYADDR check: Open Question 12)' },
    { cpu: 'kvm-guest', msr: 0x572, value: 0x1n, want: 'ok', label: 'bit 0 (KVM does not check 4:0)' },
  ]))('$label on $on gives $want', ({ cpu, msr, value, want }) => {
    expect(wrRule(msrFile(cpu), msr, value)).toBe(want);
  });
});

describe('ADDRn_A/B value rules: canonical for the maximum linear-address width', () => {
  test.for(named([
    { cpu: 'skylake', msr: 0x580, value: 0x0000_7fff_ffff_ffffn, want: 'ok', label: 'top of the lower half (48-bit)' },
    { cpu: 'skylake', msr: 0x580, value: 0x0000_8000_0000_0000n, want: 'ADDR.canonical', label: 'bit 47 set, not sign-extended (48-bit)' },
    { cpu: 'skylake', msr: 0x581, value: 0xffff_8000_0000_0000n, want: 'ok', label: 'bottom of the upper half (48-bit)' },
    { cpu: 'skylake', msr: 0x582, value: 0x0001_0000_0000_0000n, want: 'ADDR.canonical', label: 'bit 48 (48-bit)' },
    { cpu: 'icelake', msr: 0x580, value: 0x0000_8000_0000_0000n, want: 'ok', label: 'bit 47 (57-bit, LA57)' },
    { cpu: 'icelake', msr: 0x580, value: 0x0100_0000_0000_0000n, want: 'ADDR.canonical', label: 'bit 56, not sign-extended (57-bit)' },
    { cpu: 'icelake', msr: 0x580, value: 0xff00_0000_0000_0000n, want: 'ok', label: 'bottom of the upper half (57-bit)' },
  ]))('$label on $on gives $want', ({ cpu, msr, value, want }) => {
    expect(wrRule(msrFile(cpu), msr, value)).toBe(want);
  });
});

describe('G6: a faulting WRMSR changes nothing', () => {
  test.for(named([
    { cpu: 'skylake', msr: 0x570, value: CTL_TOPA_ON | (1n << 18n), want: 'CTL.2', label: 'CTL with TraceEn and a reserved bit' },
    { cpu: 'broadwell', msr: 0x570, value: 0x105n, want: 'BDM106', label: 'CTL TraceEn without BranchEn' },
    { cpu: 'skylake', msr: 0x571, value: 0x38n, want: 'STATUS.reserved', label: 'STATUS Error|Stopped|bit 3' },
    { cpu: 'skylake', msr: 0x560, value: 0x1041n, want: 'OUTPUT_BASE.reserved', label: 'OUTPUT_BASE with bit 0' },
    { cpu: 'skylake', msr: 0xda0, value: 0x101n, want: 'XSS.reserved', label: 'IA32_XSS with bit 0' },
  ]))('$label on $on leaves every MSR as it was', ({ cpu, msr, value, want }) => {
    const f = msrFile(cpu);
    f.write(0x571, 0n);
    f.write(0x560, 0x2000n);
    const before = snapshot(f);
    expect(wrRule(f, msr, value)).toBe(want);
    expect(snapshot(f)).toEqual(before);
  });
});

describe('unknown MSRs', () => {
  test.for([0x0, 0x10, 0x573, 0x588, 0xffff_ffff])('RDMSR and WRMSR 0x%s raise #GP', (msr) => {
    expect(rdRule(msrFile('full'), msr)).toBe('MSR.unknown');
    expect(wrRule(msrFile('full'), msr, 0n)).toBe('MSR.unknown');
  });
});
