// One test per rule of docs/sdm/msrs.md §2, §3.3 and the §9 checklist, plus BDM106 and KVM, of the
// rule set the model and the driver share (driver/hw/msr-rules.ts). Values are written by hand from the spec text.
import { describe, expect, test } from 'vitest';
import { KVM_QUIRKS, rdmsrFault, wrmsrFault, type MsrCpu, type MsrCpuState } from '../../driver/hw/msr-rules.js';
import type { PerfmonCaps, PtCaps } from '../../driver/hw/cpuid.js';
import { errataOf } from '../../driver/hw/errata.js';
import { CAPS, caps, NO_PT_BIT, type ProfileName } from './fixtures.js';

const CTL = 0x570, STATUS = 0x571, OUTPUT_BASE = 0x560, MASK_PTRS = 0x561, CR3_MATCH = 0x572;
const ADDR0_A = 0x580, ADDR1_B = 0x583, ADDR2_A = 0x584, ADDR3_B = 0x587;
const TraceEn = 0x1n, OS = 0x4n, User = 0x8n, ToPA = 0x100n, BranchEn = 0x2000n, FabricEn = 0x40n;
const RUNNING = TraceEn | OS | ToPA | BranchEn; // 0x2105

/** A QEMU/KVM guest: every KVM quirk. */
const KVM = new Set(KVM_QUIRKS);
/** Broadwell's errata (driver/hw/errata.ts, family 6 model 0x4F). */
const BDW_ERRATA = errataOf({ family: 6, model: 0x4f, stepping: 1 });
/** The CPU and state a test judges against: `caps`, TraceEn=0 at CPL 0 unless `extra` says otherwise. */
type Ctx = { readonly cpu: MsrCpu; readonly state: MsrCpuState };
type Extra = Omit<MsrCpu, 'caps'> & Partial<MsrCpuState>;
function on(c: PtCaps, extra: Extra = {}): Ctx {
  const { ctl, cpl, inVmxOperation, ...cpu } = extra;
  return { cpu: { caps: c, ...cpu }, state: { ctl: ctl ?? 0n, ...(cpl === undefined ? {} : { cpl }), ...(inVmxOperation === undefined ? {} : { inVmxOperation }) } };
}
function ctx(profile: ProfileName, extra: Extra = {}): Ctx {
  return on(CAPS[profile], extra);
}
const rule = (msr: number, value: bigint, c: Ctx): string | undefined => wrmsrFault(c.cpu, c.state, msr, value)?.rule;
const rdRule = (msr: number, c: Ctx): string | undefined => rdmsrFault(c.cpu, c.state, msr)?.rule;
const reason = (msr: number, value: bigint, c: Ctx): string | undefined => wrmsrFault(c.cpu, c.state, msr, value)?.reason;

describe('G1: no Intel PT (leaf 7 EBX[25] = 0)', () => {
  const noPt = caps(NO_PT_BIT);
  test.for([{ msr: CTL }, { msr: STATUS }, { msr: OUTPUT_BASE }, { msr: ADDR0_A }, { msr: 0x565 }])(
    'WRMSR and RDMSR of $msr raise #GP', ({ msr }) => {
      expect(rule(msr, 0n, on(noPt))).toBe('G1');
      expect(rdRule(msr, on(noPt))).toBe('G1');
    });

  test('an MSR outside 0x560–0x587 is judged by its own rules, not G1', () => {
    const perfmon: PerfmonCaps = { version: 4, gpCounters: 4, fixedCounters: 3 };
    expect(rdRule(0x38e, on(noPt, { perfmon }))).toBeUndefined();
    expect(rule(0x390, 1n, on(noPt, { perfmon }))).toBeUndefined();
  });
});

describe('G2: MSR not enumerated (docs/sdm/msrs.md §1); an address in the block that is no RTIT MSR', () => {
  test.for([
    { profile: 'none', msr: OUTPUT_BASE, want: 'G2' },
    { profile: 'none', msr: MASK_PTRS, want: 'G2' },
    { profile: 'bdw', msr: OUTPUT_BASE, want: undefined },
    { profile: 'none', msr: CR3_MATCH, want: 'G2' },
    { profile: 'bdw', msr: CR3_MATCH, want: undefined },
    { profile: 'bdw', msr: ADDR0_A, want: 'G2' },
    { profile: 'kbl', msr: ADDR1_B, want: undefined },
    { profile: 'kbl', msr: ADDR2_A, want: 'G2' },
    { profile: 'full', msr: ADDR3_B, want: undefined },
    { profile: 'kbl', msr: 0x562, want: 'MSR.unknown' },
    { profile: 'kbl', msr: 0x573, want: 'MSR.unknown' },
  ] as const)('$profile: RDMSR/WRMSR $msr → $want', ({ profile, msr, want }) => {
    expect(rdRule(msr, ctx(profile))).toBe(want);
    expect(rule(msr, 0n, ctx(profile))).toBe(want);
  });
});

describe('G3: only IA32_RTIT_CTL may be written while TraceEn = 1', () => {
  test.for([{ msr: STATUS }, { msr: OUTPUT_BASE }, { msr: MASK_PTRS }, { msr: CR3_MATCH }, { msr: ADDR0_A }])(
    'WRMSR $msr with TraceEn = 1 raises #GP', ({ msr }) => {
      expect(rule(msr, 0n, ctx('kbl', { ctl: RUNNING }))).toBe('G3');
    });

  test('the reason names the rule', () => {
    expect(reason(STATUS, 0n, ctx('kbl', { ctl: RUNNING }))).toMatch(/^G3: TraceEn=1: only IA32_RTIT_CTL may be written, not IA32_RTIT_STATUS \(0x571\)$/);
  });

  test('RDMSR with TraceEn = 1 is legal', () => {
    expect(rdRule(STATUS, ctx('kbl', { ctl: RUNNING }))).toBeUndefined();
  });
});

test('G5: WRMSR and RDMSR at CPL 3 raise #GP', () => {
  expect(rule(CTL, 0n, ctx('kbl', { cpl: 3 }))).toBe('G5');
  expect(rdRule(CTL, ctx('kbl', { cpl: 3 }))).toBe('G5');
});

describe('CTL rule 2: reserved and un-enumerated bits', () => {
  test.for([
    { what: 'reserved bit 18', value: 0x4_0000n, profile: 'full', want: 'CTL.2' },
    { what: 'reserved bit 48', value: 0x1_0000_0000_0000n, profile: 'full', want: 'CTL.2' },
    { what: 'reserved bit 63', value: 0x8000_0000_0000_0000n, profile: 'full', want: 'CTL.2' },
    { what: 'CYCEn without EBX[1]', value: 0x2n, profile: 'none', want: 'CTL.2' },
    { what: 'CYCEn with EBX[1]', value: 0x2n, profile: 'kbl', want: undefined },
    { what: 'PwrEvtEn without EBX[5]', value: 0x10n, profile: 'kbl', want: 'CTL.2' },
    { what: 'PwrEvtEn with EBX[5]', value: 0x10n, profile: 'full', want: undefined },
    { what: 'FUPonPTW without EBX[4]', value: 0x20n, profile: 'kbl', want: 'CTL.2' },
    { what: 'PTWEn without EBX[4]', value: 0x1000n, profile: 'kbl', want: 'CTL.2' },
    { what: 'PTWEn with EBX[4]', value: 0x1000n, profile: 'full', want: undefined },
    { what: 'FabricEn without ECX[3]', value: 0x40n, profile: 'kbl', want: 'CTL.2' },
    { what: 'FabricEn with ECX[3]', value: 0x40n, profile: 'full', want: undefined },
    { what: 'CR3Filter without EBX[0]', value: 0x80n, profile: 'none', want: 'CTL.2' },
    { what: 'CR3Filter on Broadwell', value: 0x80n, profile: 'bdw', want: undefined },
    { what: 'ToPA without ECX[0]', value: 0x100n, profile: 'none', want: 'CTL.2' },
    { what: 'ToPA on Broadwell', value: 0x100n, profile: 'bdw', want: undefined },
    { what: 'MTCEn without EBX[3]', value: 0x200n, profile: 'bdw', want: 'CTL.2' },
    { what: 'MTCFreq=3 without EBX[3]', value: 0xc000n, profile: 'bdw', want: 'CTL.2' },
    { what: 'MTCEn, MTCFreq=3 with EBX[3]', value: 0xc200n, profile: 'kbl', want: undefined },
    { what: 'PSBFreq=1 without EBX[1]', value: 0x100_0000n, profile: 'bdw', want: 'CTL.2' },
    { what: 'ADDR0_CFG=1 without EBX[2]', value: 0x1_0000_0000n, profile: 'bdw', want: 'CTL.2' },
    { what: 'ADDR1_CFG=1 with RANGECNT 2', value: 0x10_0000_0000n, profile: 'kbl', want: undefined },
    { what: 'ADDR2_CFG=1 with RANGECNT 2', value: 0x100_0000_0000n, profile: 'kbl', want: 'CTL.2' },
    { what: 'ADDR3_CFG=2 with RANGECNT 4', value: 0x2000_0000_0000n, profile: 'full', want: undefined },
    { what: 'EventEn without EBX[7]', value: 0x8000_0000n, profile: 'kbl', want: 'CTL.2' },
    { what: 'EventEn with EBX[7]', value: 0x8000_0000n, profile: 'full', want: undefined },
    { what: 'DisTNT without EBX[8]', value: 0x0080_0000_0000_0000n, profile: 'kbl', want: 'CTL.2' },
    { what: 'DisTNT with EBX[8]', value: 0x0080_0000_0000_0000n, profile: 'full', want: undefined },
    { what: 'InjectPsbPmiOnEnable without EBX[6]', value: 0x0100_0000_0000_0000n, profile: 'kbl', want: 'CTL.2' },
    { what: 'InjectPsbPmiOnEnable with EBX[6]', value: 0x0100_0000_0000_0000n, profile: 'full', want: undefined },
    { what: 'BranchEn, never gated', value: 0x2000n, profile: 'none', want: undefined },
  ] as const)('$what on $profile → $want', ({ value, profile, want }) => {
    expect(rule(CTL, value, ctx(profile))).toBe(want);
  });

  test('the reason of a reserved bit is "CTL.2: reserved bit 18 set"', () => {
    expect(reason(CTL, 0x4_0000n, ctx('full'))).toBe('CTL.2: reserved bit 18 set');
  });

  test('the reason of an un-enumerated field names the field and its CPUID bit', () => {
    expect(reason(CTL, 0x10n, ctx('kbl'))).toBe('CTL.2: PwrEvtEn set but CPUID.(EAX=14H,ECX=0):EBX[5] = 0');
  });
});

describe('CTL rule 3: TraceEn lock', () => {
  test('changing a bit while TraceEn stays 1 raises #GP', () => {
    expect(rule(CTL, RUNNING | User, ctx('kbl', { ctl: RUNNING }))).toBe('CTL.3');
  });

  test('writing back exactly the current value while TraceEn = 1 is legal', () => {
    expect(rule(CTL, RUNNING, ctx('kbl', { ctl: RUNNING }))).toBeUndefined();
  });

  test('clearing TraceEn while changing other bits is legal', () => {
    expect(rule(CTL, (RUNNING | User) & ~TraceEn, ctx('kbl', { ctl: RUNNING }))).toBeUndefined();
  });

  test('changing bits while TraceEn goes 0 → 1 is legal', () => {
    expect(rule(CTL, RUNNING | User, ctx('kbl', { ctl: OS }))).toBeUndefined();
  });
});

describe('CTL rule 4: ADDRn_CFG > 2', () => {
  test.for([
    { value: 0x3_0000_0000n, what: 'ADDR0_CFG=3', want: 'CTL.4' },
    { value: 0xf0_0000_0000n, what: 'ADDR1_CFG=15', want: 'CTL.4' },
    { value: 0x22_0000_0000n, what: 'ADDR0_CFG=2, ADDR1_CFG=2', want: undefined },
  ] as const)('$what on kbl → $want', ({ value, want }) => {
    expect(rule(CTL, value, ctx('kbl'))).toBe(want);
  });
});

describe('CTL rules 5–7: encodings not in the CPUID bitmaps', () => {
  test.for([
    // kbl: MTC bitmap 0x0249 = {0,3,6,9}; CYC 0x3FFF = {0..13}; PSB 0x3F = {0..5}.
    { rule: 'CTL.5', what: 'MTCFreq=1 (even with MTCEn=0)', value: 0x4000n, profile: 'kbl' },
    { rule: undefined, what: 'MTCFreq=9', value: 0x2_4000n, profile: 'kbl' },
    { rule: 'CTL.6', what: 'CycThresh=14', value: 0x70_0000n, profile: 'kbl' },
    { rule: undefined, what: 'CycThresh=13', value: 0x68_0000n, profile: 'kbl' },
    // QEMU's CYC bitmap is 0x1FFF = {0..12}.
    { rule: 'CTL.6', what: 'CycThresh=13', value: 0x68_0000n, profile: 'qemu' },
    { rule: 'CTL.7', what: 'PSBFreq=6', value: 0x600_0000n, profile: 'kbl' },
    { rule: undefined, what: 'PSBFreq=5', value: 0x500_0000n, profile: 'kbl' },
    { rule: 'CTL.7', what: 'PSBFreq=6', value: 0x600_0000n, profile: 'full' },
    { rule: undefined, what: 'MTCFreq=15, CycThresh=15', value: 0x7b_c000n, profile: 'full' },
  ] as const)('$what on $profile → $rule', ({ rule: want, value, profile }) => {
    expect(rule(CTL, value, ctx(profile))).toBe(want);
  });

  test('the bitmap rule applies to encoding 0 when bit 0 of the bitmap is clear (Open Question 5)', () => {
    const odd: PtCaps = { ...CAPS.kbl, psbPeriods: 0x3e };
    expect(rule(CTL, 0n, on(odd))).toBe('CTL.7');
  });

  test('the reason names the field, the CPUID bitmap and its value', () => {
    expect(reason(CTL, 0x700_0000n, ctx('kbl'))).toBe('CTL.7: PSBFreq=7 not in CPUID.(EAX=14H,ECX=1):EBX[31:16] bitmap 0x3f');
  });
});

describe('CTL rule 8: TraceEn=1, ToPA=0, FabricEn=0 without single-range output', () => {
  const noSingle: PtCaps = { ...CAPS.full, singleRangeOutput: false };
  test.for([
    { what: 'Broadwell, single range', caps: CAPS.bdw, value: TraceEn | BranchEn, want: 'CTL.8' },
    { what: 'no features, single range', caps: CAPS.none, value: TraceEn | BranchEn, want: 'CTL.8' },
    { what: 'Kaby Lake, single range', caps: CAPS.kbl, value: TraceEn | BranchEn, want: undefined },
    { what: 'no single range, FabricEn=1', caps: noSingle, value: TraceEn | BranchEn | FabricEn, want: undefined },
    { what: 'no single range, ToPA=1 with FabricEn=1', caps: noSingle, value: TraceEn | ToPA | FabricEn, want: undefined },
    { what: 'no single range, TraceEn=0', caps: noSingle, value: BranchEn, want: undefined },
  ] as const)('$what → $want', ({ caps: c, value, want }) => {
    expect(rule(CTL, value, on(c))).toBe(want);
  });
});

describe('CTL rule 9: TraceEn=1 in VMX operation with IA32_VMX_MISC[14] = 0', () => {
  test('setting TraceEn raises #GP', () => {
    expect(rule(CTL, RUNNING, ctx('kbl', { inVmxOperation: true, ptInVmx: false }))).toBe('CTL.9');
  });
  test('IA32_VMX_MISC[14] = 1 allows it', () => {
    expect(rule(CTL, RUNNING, ctx('kbl', { inVmxOperation: true, ptInVmx: true }))).toBeUndefined();
  });
  test('a write with TraceEn = 0 is allowed', () => {
    expect(rule(CTL, RUNNING & ~TraceEn, ctx('kbl', { inVmxOperation: true }))).toBeUndefined();
  });
});

describe('BDM106 (Broadwell erratum): TraceEn=1 requires BranchEn=1', () => {
  test('TraceEn with BranchEn=0 raises #GP', () => {
    expect(rule(CTL, TraceEn | OS | ToPA, ctx('bdw', { errata: BDW_ERRATA }))).toBe('BDM106');
    expect(reason(CTL, TraceEn | OS | ToPA, ctx('bdw', { errata: BDW_ERRATA }))).toBe('BDM106: erratum BDM106: TraceEn=1 and BranchEn=0');
  });
  test('TraceEn with BranchEn=1 is legal', () => {
    expect(rule(CTL, RUNNING, ctx('bdw', { errata: BDW_ERRATA }))).toBeUndefined();
  });
  test('without the erratum BranchEn=0 is legal', () => {
    expect(rule(CTL, TraceEn | OS | ToPA, ctx('bdw'))).toBeUndefined();
    expect(rule(CTL, TraceEn | OS | ToPA, ctx('bdw', { errata: errataOf({ family: 6, model: 0x5e, stepping: 3 }) }))).toBeUndefined();
  });
  test('TraceEn=0 with BranchEn=0 is legal', () => {
    expect(rule(CTL, OS | ToPA, ctx('bdw', { errata: BDW_ERRATA }))).toBeUndefined();
  });
});

describe('KVM quirk (docs/prior-art.md §6)', () => {
  const kvmFull = ctx('full', { quirks: KVM });
  test.for([
    { field: 'EventEn (31)', value: 0x8000_0000n },
    { field: 'DisTNT (55)', value: 0x0080_0000_0000_0000n },
    { field: 'InjectPsbPmiOnEnable (56)', value: 0x0100_0000_0000_0000n },
  ])('CTL $field raises #GP even when CPUID enumerates it', ({ value }) => {
    expect(rule(CTL, value, kvmFull)).toBe('KVM.CTL');
  });

  test('with QEMU leaf 14H EventEn is already an un-enumerated bit', () => {
    expect(rule(CTL, 0x8000_0000n, ctx('qemu', { quirks: KVM }))).toBe('CTL.2');
  });

  test('any CTL write in VMX operation raises #GP, even with IA32_VMX_MISC[14] = 1 and TraceEn = 0', () => {
    expect(rule(CTL, OS, ctx('qemu', { quirks: KVM, inVmxOperation: true, ptInVmx: true }))).toBe('KVM.VMX');
  });

  test.for([{ bit: 6, value: 0x40n }, { bit: 7, value: 0x80n }])('STATUS bit $bit raises #GP even when EBX[6] = 1', ({ value }) => {
    expect(rule(STATUS, value, kvmFull)).toBe('KVM.STATUS');
  });

  test('STATUS bits {0,1,2,4,5,48:32} are accepted', () => {
    expect(rule(STATUS, 0x1_ffff_0000_0037n, ctx('qemu', { quirks: KVM }))).toBeUndefined();
  });

  test('ADDRn_A/B only for n < ranges (2 on QEMU)', () => {
    expect(rule(ADDR2_A, 0n, ctx('qemu', { quirks: KVM }))).toBe('G2');
    expect(rule(ADDR1_B, 0n, ctx('qemu', { quirks: KVM }))).toBeUndefined();
  });

  test('ADDRn_CFG only for n < ranges (2 on QEMU)', () => {
    expect(rule(CTL, 0x100_0000_0000n, ctx('qemu', { quirks: KVM }))).toBe('CTL.2');
  });

  test('CR3_MATCH bits 4:0 are not checked (KVM_CR3_MATCH_LAX); without the quirk they are', () => {
    expect(rule(CR3_MATCH, 0x1001n, ctx('qemu', { quirks: new Set(['KVM_CR3_MATCH_LAX'] as const) }))).toBeUndefined();
    expect(rule(CR3_MATCH, 0x1001n, ctx('qemu', { quirks: new Set(['KVM_CTL_BITMASK'] as const) }))).toBe('CR3_MATCH.reserved');
  });

  test('each quirk is read on its own: KVM_VMX_CTL alone refuses the write, KVM_CTL_BITMASK alone does not', () => {
    const vmx = { inVmxOperation: true, ptInVmx: true } as const;
    expect(rule(CTL, OS, ctx('full', { ...vmx, quirks: new Set(['KVM_VMX_CTL'] as const) }))).toBe('KVM.VMX');
    expect(rule(CTL, OS, ctx('full', { ...vmx, quirks: new Set(['KVM_CTL_BITMASK'] as const) }))).toBeUndefined();
    expect(rule(STATUS, 0x80n, ctx('full', { quirks: new Set(['KVM_CTL_BITMASK'] as const) }))).toBeUndefined();
  });
});

describe('IA32_RTIT_STATUS (§4, §9)', () => {
  test.for([
    { what: 'bit 3', value: 0x8n, profile: 'full', want: 'STATUS.reserved' },
    { what: 'bit 8', value: 0x100n, profile: 'full', want: 'STATUS.reserved' },
    { what: 'bit 31', value: 0x8000_0000n, profile: 'full', want: 'STATUS.reserved' },
    { what: 'bit 49', value: 0x2_0000_0000_0000n, profile: 'full', want: 'STATUS.reserved' },
    { what: 'PendPSB (6) without EBX[6]', value: 0x40n, profile: 'kbl', want: 'STATUS.reserved' },
    { what: 'PendTopaPMI (7) without EBX[6]', value: 0x80n, profile: 'kbl', want: 'STATUS.reserved' },
    { what: 'PendPSB, PendTopaPMI with EBX[6]', value: 0xc0n, profile: 'full', want: undefined },
    { what: 'PacketByteCnt≠0 without EBX[1]', value: 0x1_0000_0000n, profile: 'bdw', want: 'STATUS.PacketByteCnt' },
    { what: 'PacketByteCnt≠0 with EBX[1]', value: 0x1_0000_0000n, profile: 'kbl', want: undefined },
    { what: 'Error and Stopped', value: 0x30n, profile: 'none', want: undefined },
    { what: 'read-only bits 0–2 (FilterEn: reserved, writes ignored)', value: 0x7n, profile: 'bdw', want: undefined },
  ] as const)('$what on $profile → $want', ({ value, profile, want }) => {
    expect(rule(STATUS, value, ctx(profile))).toBe(want);
  });
});

describe('IA32_RTIT_OUTPUT_BASE (§5, §9)', () => {
  test.for([
    { what: 'bits 6:0 ≠ 0', value: 0x10_0040n, profile: 'kbl', want: 'OUTPUT_BASE.reserved' },
    { what: 'bit 39 with MAXPHYADDR 39', value: 0x80_0000_0000n, profile: 'kbl', want: 'OUTPUT_BASE.MAXPHYADDR' },
    { what: 'bit 39 with MAXPHYADDR 52', value: 0x80_0000_0000n, profile: 'full', want: undefined },
    { what: 'bit 52 with MAXPHYADDR 52', value: 0x10_0000_0000_0000n, profile: 'full', want: 'OUTPUT_BASE.MAXPHYADDR' },
    { what: 'bits 11:7 ≠ 0 (an operational error, not #GP)', value: 0x10_0080n, profile: 'kbl', want: undefined },
  ] as const)('$what on $profile → $want', ({ value, profile, want }) => {
    expect(rule(OUTPUT_BASE, value, ctx(profile))).toBe(want);
  });
});

test('IA32_RTIT_OUTPUT_MASK_PTRS accepts any value while TraceEn = 0 (§6)', () => {
  expect(rule(MASK_PTRS, 0xffff_ffff_ffff_ff00n, ctx('kbl'))).toBeUndefined();
});

describe('IA32_RTIT_CR3_MATCH (§7, §9)', () => {
  test('bits 4:0 ≠ 0 raise #GP', () => {
    expect(rule(CR3_MATCH, 0x1234_5001n, ctx('kbl'))).toBe('CR3_MATCH.reserved');
  });
  test('bits above MAXPHYADDR are not checked (Open Question 12)', () => {
    expect(rule(CR3_MATCH, 0xffff_0000_0000_1000n, ctx('kbl'))).toBeUndefined();
  });
});

describe('IA32_RTIT_ADDRn_A/B (§8, §9): canonical for the maximum linear-address width', () => {
  test.for([
    { value: 0x0000_8000_0000_0000n, profile: 'kbl', want: 'ADDR.canonical' },
    { value: 0xffff_8000_0000_0000n, profile: 'kbl', want: undefined },
    { value: 0x0000_8000_0000_0000n, profile: 'full', want: undefined },
    { value: 0x0100_0000_0000_0000n, profile: 'full', want: 'ADDR.canonical' },
  ] as const)('$value on $profile → $want', ({ value, profile, want }) => {
    expect(rule(ADDR0_A, value, ctx(profile))).toBe(want);
  });
});

describe('the fault as data', () => {
  test('WRMSR: the op, the MSR, the value, the rule, and a reason that starts with the rule', () => {
    expect(wrmsrFault({ caps: CAPS.kbl }, { ctl: 0n }, STATUS, 0x8n)).toEqual({
      op: 'wrmsr', msr: STATUS, value: 0x8n, rule: 'STATUS.reserved', reason: 'STATUS.reserved: reserved bit 3 set',
    });
  });
  test('RDMSR: no value', () => {
    expect(rdmsrFault({ caps: CAPS.none }, { ctl: 0n }, CR3_MATCH)).toEqual({
      op: 'rdmsr', msr: CR3_MATCH, rule: 'G2', reason: 'G2: IA32_RTIT_CR3_MATCH (0x572) needs CR3 filtering: CPUID.(EAX=14H,ECX=0):EBX[0] = 0',
    });
  });
});

test.for([-1n, 1n << 64n])('G4: a value that is not 64 bits (%s) raises #GP', (value) => {
  expect(rule(MASK_PTRS, value, ctx('kbl'))).toBe('G4');
});

describe('an address no rule implements', () => {
  test.for([0x0, 0x10, 0x588, 0xffff_ffff])('RDMSR and WRMSR 0x%s: MSR.unknown', (msr) => {
    expect(rdRule(msr, ctx('full'))).toBe('MSR.unknown');
    expect(rule(msr, 0n, ctx('full'))).toBe('MSR.unknown');
  });
});

describe('IA32_PERF_GLOBAL_STATUS, _RESET, _SET (§11): existence by PerfMon version, counter bits from leaf 0AH', () => {
  const pm = (version: number, gpCounters = 4, fixedCounters = 3): PerfmonCaps => ({ version, gpCounters, fixedCounters });
  test.for([
    { msr: 0x38e, version: 1, want: 'G2' },
    { msr: 0x38e, version: 2, want: undefined },
    { msr: 0x390, version: 1, want: 'G2' },
    { msr: 0x390, version: 2, want: undefined },
    { msr: 0x391, version: 3, want: 'G2' },
    { msr: 0x391, version: 4, want: undefined },
  ] as const)('RDMSR $msr with PerfMon version $version → $want', ({ msr, version, want }) => {
    expect(rdRule(msr, ctx('kbl', { perfmon: pm(version) }))).toBe(want);
  });
  test('without a PerfMon description, none of them exists', () => {
    expect([0x38e, 0x390, 0x391].map((m) => rdRule(m, ctx('kbl')))).toEqual(['G2', 'G2', 'G2']);
  });
  test('GLOBAL_STATUS is read-only', () => {
    expect(rule(0x38e, 1n << 55n, ctx('kbl', { perfmon: pm(4) }))).toBe('PERF_GLOBAL_STATUS.read-only');
  });
  test.for([
    { what: 'Trace_ToPA_PMI (55)', value: 1n << 55n, want: undefined },
    { what: 'Ovf_PMC3 with 4 counters', value: 1n << 3n, want: undefined },
    { what: 'Ovf_PMC4 with 4 counters', value: 1n << 4n, want: 'PERF_GLOBAL.reserved' },
    { what: 'Ovf_FixedCtr2 with 3 fixed counters', value: 1n << 34n, want: undefined },
    { what: 'bit 35 (no field)', value: 1n << 35n, want: 'PERF_GLOBAL.reserved' },
    { what: 'CondChgd (63)', value: 1n << 63n, want: undefined },
  ] as const)('_RESET and _SET: $what → $want', ({ value, want }) => {
    expect(rule(0x390, value, ctx('kbl', { perfmon: pm(4) }))).toBe(want);
    expect(rule(0x391, value, ctx('kbl', { perfmon: pm(4) }))).toBe(want);
  });
  test('the counter limit follows leaf 0AH: Ovf_FixedCtr1 with one fixed counter is reserved', () => {
    expect(reason(0x390, 1n << 33n, ctx('kbl', { perfmon: pm(4, 4, 1) })))
      .toBe('PERF_GLOBAL.reserved: Ovf_FixedCtr bit 33 set at or above width 33 (CPUID.0AH:EDX[4:0] (fixed-function counters))');
  });
});

describe('IA32_XSS (§12)', () => {
  test('no XSAVES: G2', () => {
    expect(rdRule(0xda0, ctx('bdw'))).toBe('G2');
  });
  test.for([
    { what: 'bit 8 with 0DH,1 ECX[8] (from the field table)', profile: 'kbl', xssBits: undefined, value: 0x100n, want: undefined },
    { what: 'bit 0 (not a supervisor component)', profile: 'kbl', xssBits: undefined, value: 0x1n, want: 'XSS.reserved' },
    { what: 'bit 8 when CPUID.(0DH,1) enumerates none', profile: 'kbl', xssBits: 0n, value: 0x100n, want: 'XSS.reserved' },
    { what: 'bit 11 when CPUID.(0DH,1) enumerates it', profile: 'kbl', xssBits: 0x900n, value: 0x800n, want: undefined },
  ] as const)('$what → $want', ({ profile, xssBits, value, want }) => {
    expect(rule(0xda0, value, ctx(profile, xssBits === undefined ? {} : { xssBits }))).toBe(want);
  });
});

describe('the x2APIC LVT performance-monitor entry (§11.1)', () => {
  test.for([
    { what: 'vector, NMI delivery, mask', value: 0x1_04fen, want: undefined },
    { what: 'Delivery Status (12, read-only: writes ignored)', value: 0x1000n, want: undefined },
    { what: 'bit 17', value: 1n << 17n, want: 'LVT.reserved' },
    { what: 'bit 11', value: 1n << 11n, want: 'LVT.reserved' },
  ] as const)('$what → $want', ({ value, want }) => {
    expect(rule(0x834, value, ctx('none'))).toBe(want);
    expect(rdRule(0x834, ctx('none'))).toBeUndefined();
  });
});
