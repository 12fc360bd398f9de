// WRMSR IA32_RTIT_CTL: one test per rule of docs/sdm/msrs.md §3.3 (rules 1–9) and BDM106,
// per profile where the outcome differs. Values are written by hand from the spec text.
import { describe, expect, test } from 'vitest';
import type { CpuProfile, ProfileName } from '../../harness/sim/profiles.js';
import { CTL_TOPA_ON, msrFile, VARIANTS, wrRule } from './helpers.js';

const CTL = 0x570;
type Row = { cpu: ProfileName | CpuProfile; label: string; value: bigint; want: string };
/** Adds `on`, the CPU's name, for test titles. */
const named = (rows: Row[]) => rows.map((r) => ({ ...r, on: typeof r.cpu === 'string' ? r.cpu : r.cpu.name }));

describe('§3.3 rule 1 (G1): no Intel PT', () => {
  test('a CTL write on a CPU without CPUID.07H:EBX[25] raises #GP', () => {
    expect(wrRule(msrFile(VARIANTS.noPt), CTL, 0n)).toBe('G1');
  });
});

describe('§3.3 rule 2: reserved and un-enumerated bits', () => {
  test.for(named([
    { cpu: 'skylake', label: 'bit 18 (always reserved)', value: 1n << 18n, want: 'CTL.2' },
    { cpu: 'skylake', label: 'bit 23 (always reserved)', value: 1n << 23n, want: 'CTL.2' },
    { cpu: 'skylake', label: 'bit 28 (always reserved)', value: 1n << 28n, want: 'CTL.2' },
    { cpu: 'skylake', label: 'bit 48 (always reserved)', value: 1n << 48n, want: 'CTL.2' },
    { cpu: 'skylake', label: 'bit 63 (always reserved)', value: 1n << 63n, want: 'CTL.2' },
    { cpu: 'full', label: 'bit 18 (always reserved)', value: 1n << 18n, want: 'CTL.2' },
    { cpu: 'skylake', label: 'PwrEvtEn without EBX[5]', value: 0x10n, want: 'CTL.2' },
    { cpu: 'sapphire-rapids', label: 'PwrEvtEn with EBX[5]', value: 0x10n, want: 'ok' },
    { cpu: 'skylake', label: 'FUPonPTW without EBX[4]', value: 0x20n, want: 'CTL.2' },
    { cpu: 'skylake', label: 'PTWEn without EBX[4]', value: 0x1000n, want: 'CTL.2' },
    { cpu: 'full', label: 'PTWEn with EBX[4]', value: 0x1000n, want: 'ok' },
    { cpu: 'skylake', label: 'FabricEn without ECX[3]', value: 0x40n, want: 'CTL.2' },
    { cpu: 'full', label: 'FabricEn with ECX[3]', value: 0x40n, want: 'ok' },
    { cpu: VARIANTS.noCr3, label: 'CR3Filter without EBX[0]', value: 0x80n, want: 'CTL.2' },
    { cpu: 'broadwell', label: 'CR3Filter with EBX[0]', value: 0x80n, want: 'ok' },
    { cpu: VARIANTS.fabricOnly, label: 'ToPA without ECX[0]', value: 0x100n, want: 'CTL.2' },
    { cpu: 'broadwell', label: 'CYCEn without EBX[1]', value: 0x2n, want: 'CTL.2' },
    { cpu: 'broadwell', label: 'CycThresh=1 without EBX[1]', value: 1n << 19n, want: 'CTL.2' },
    { cpu: 'broadwell', label: 'PSBFreq=1 without EBX[1]', value: 1n << 24n, want: 'CTL.2' },
    { cpu: 'broadwell', label: 'MTCEn without EBX[3]', value: 0x200n, want: 'CTL.2' },
    { cpu: 'broadwell', label: 'MTCFreq=3 without EBX[3]', value: 3n << 14n, want: 'CTL.2' },
    { cpu: 'broadwell', label: 'ADDR0_CFG=1 without EBX[2]', value: 1n << 32n, want: 'CTL.2' },
    { cpu: 'skylake', label: 'ADDR1_CFG=1 with RANGECNT 2', value: 1n << 36n, want: 'ok' },
    { cpu: 'skylake', label: 'ADDR2_CFG=1 with RANGECNT 2', value: 1n << 40n, want: 'CTL.2' },
    { cpu: 'full', label: 'ADDR3_CFG=2 with RANGECNT 4', value: 2n << 44n, want: 'ok' },
    { cpu: 'skylake', label: 'EventEn without EBX[7]', value: 1n << 31n, want: 'CTL.2' },
    { cpu: 'full', label: 'EventEn with EBX[7]', value: 1n << 31n, want: 'ok' },
    { cpu: 'skylake', label: 'DisTNT without EBX[8]', value: 1n << 55n, want: 'CTL.2' },
    { cpu: 'full', label: 'DisTNT with EBX[8]', value: 1n << 55n, want: 'ok' },
    { cpu: 'skylake', label: 'InjectPsbPmiOnEnable without EBX[6]', value: 1n << 56n, want: 'CTL.2' },
    { cpu: 'full', label: 'InjectPsbPmiOnEnable with EBX[6]', value: 1n << 56n, want: 'ok' },
    { cpu: 'kvm-guest', label: 'InjectPsbPmiOnEnable (KVM)', value: 1n << 56n, want: 'CTL.2' },
    { cpu: VARIANTS.kvmClaimsAll, label: 'InjectPsbPmiOnEnable although leaf 14H says EBX[6] (KVM ctl_bitmask)', value: 1n << 56n, want: 'KVM.CTL' },
    { cpu: VARIANTS.kvmClaimsAll, label: 'EventEn although leaf 14H says EBX[7] (KVM ctl_bitmask)', value: 1n << 31n, want: 'KVM.CTL' },
    { cpu: VARIANTS.kvmClaimsAll, label: 'DisTNT although leaf 14H says EBX[8] (KVM ctl_bitmask)', value: 1n << 55n, want: 'KVM.CTL' },
    { cpu: 'skylake', label: 'BranchEn (no gate: Open Question 4)', value: 1n << 13n, want: 'ok' },
    { cpu: 'skylake', label: 'TSCEn|DisRETC|OS|User (never gated)', value: 0xc0cn, want: 'ok' },
  ]))('$label on $on gives $want', ({ cpu, value, want }) => {
    expect(wrRule(msrFile(cpu), CTL, value)).toBe(want);
  });
});

describe('§3.3 rule 3: the TraceEn lock', () => {
  test.for<{ cpu: ProfileName; label: string; value: bigint; want: string }>([
    { cpu: 'skylake', label: 'changing OS while TraceEn stays 1', value: CTL_TOPA_ON | 0x8n, want: 'CTL.3' },
    { cpu: 'skylake', label: 'writing back the same value', value: CTL_TOPA_ON, want: 'ok' },
    { cpu: 'skylake', label: 'clearing TraceEn and changing other bits', value: 0x0c08n, want: 'ok' },
    { cpu: 'kvm-guest', label: 'changing OS while TraceEn stays 1', value: CTL_TOPA_ON | 0x8n, want: 'CTL.3' },
    { cpu: 'broadwell', label: 'changing OS while TraceEn stays 1', value: CTL_TOPA_ON | 0x8n, want: 'CTL.3' },
  ])('$label on $cpu gives $want', ({ cpu, value, want }) => {
    const f = msrFile(cpu);
    expect(f.write(CTL, CTL_TOPA_ON)).toBeUndefined();
    expect(wrRule(f, CTL, value)).toBe(want);
  });
});

describe('§3.3 rule 4: ADDRn_CFG > 2', () => {
  test.for([
    { cfg: 3n, want: 'CTL.4' },
    { cfg: 15n, want: 'CTL.4' },
    { cfg: 2n, want: 'ok' },
  ])('ADDR0_CFG=$cfg on skylake gives $want', ({ cfg, want }) => {
    expect(wrRule(msrFile('skylake'), CTL, cfg << 32n)).toBe(want);
  });
});

describe('§3.3 rule 5: MTCFreq must be in L14.1.EAX[31:16]', () => {
  // skylake/kvm: bitmap 0x0249 = encodings 0, 3, 6, 9. full: 0xFFFF.
  test.for(named([
    { cpu: 'skylake', label: 'MTCFreq=1', value: 1n << 14n, want: 'CTL.5' },
    { cpu: 'skylake', label: 'MTCFreq=3', value: 3n << 14n, want: 'ok' },
    { cpu: 'skylake', label: 'MTCFreq=9', value: 9n << 14n, want: 'ok' },
    { cpu: 'skylake', label: 'MTCFreq=10', value: 10n << 14n, want: 'CTL.5' },
    { cpu: 'skylake', label: 'MTCFreq=1 with MTCEn=1', value: (1n << 14n) | 0x200n, want: 'CTL.5' },
    { cpu: 'kvm-guest', label: 'MTCFreq=1', value: 1n << 14n, want: 'CTL.5' },
    { cpu: 'full', label: 'MTCFreq=1', value: 1n << 14n, want: 'ok' },
  ]))('$label on $on gives $want (checked even when MTCEn=0)', ({ cpu, value, want }) => {
    expect(wrRule(msrFile(cpu), CTL, value)).toBe(want);
  });
});

describe('§3.3 rule 6: CycThresh must be in L14.1.EBX[15:0]', () => {
  // skylake 0x3FFF (0..13); icelake and kvm-guest 0x1FFF (0..12); sapphire-rapids 0x3F (0..5); full 0xFFFF.
  test.for(named([
    { cpu: 'skylake', label: 'CycThresh=13', value: 13n << 19n, want: 'ok' },
    { cpu: 'skylake', label: 'CycThresh=14', value: 14n << 19n, want: 'CTL.6' },
    { cpu: 'icelake', label: 'CycThresh=13', value: 13n << 19n, want: 'CTL.6' },
    { cpu: 'kvm-guest', label: 'CycThresh=12', value: 12n << 19n, want: 'ok' },
    { cpu: 'kvm-guest', label: 'CycThresh=13', value: 13n << 19n, want: 'CTL.6' },
    { cpu: 'sapphire-rapids', label: 'CycThresh=6', value: 6n << 19n, want: 'CTL.6' },
    { cpu: 'full', label: 'CycThresh=15', value: 15n << 19n, want: 'ok' },
  ]))('$label on $on gives $want', ({ cpu, value, want }) => {
    expect(wrRule(msrFile(cpu), CTL, value)).toBe(want);
  });
});

describe('§3.3 rule 7: PSBFreq must be in L14.1.EBX[31:16]', () => {
  // Every PSB bitmap shipped is 0x003F: encodings 0..5.
  test.for(named([
    { cpu: 'skylake', label: 'PSBFreq=5', value: 5n << 24n, want: 'ok' },
    { cpu: 'skylake', label: 'PSBFreq=6', value: 6n << 24n, want: 'CTL.7' },
    { cpu: 'full', label: 'PSBFreq=15', value: 15n << 24n, want: 'CTL.7' },
  ]))('$label on $on gives $want', ({ cpu, value, want }) => {
    expect(wrRule(msrFile(cpu), CTL, value)).toBe(want);
  });
});

describe('§3.3 rule 8: single-range output must be enumerated', () => {
  test.for(named([
    { cpu: 'broadwell', label: 'TraceEn|OS|BranchEn (ToPA=0)', value: 0x2005n, want: 'CTL.8' },
    { cpu: 'skylake', label: 'TraceEn|OS|BranchEn (ToPA=0)', value: 0x2005n, want: 'ok' },
    { cpu: VARIANTS.topaFabric, label: 'TraceEn|OS|BranchEn (ToPA=0, FabricEn=0)', value: 0x2005n, want: 'CTL.8' },
    { cpu: VARIANTS.topaFabric, label: 'TraceEn|FabricEn (ToPA=0)', value: 0x2045n, want: 'ok' },
    { cpu: VARIANTS.topaFabric, label: 'TraceEn|ToPA|FabricEn (FabricEn wins, no error)', value: 0x2145n, want: 'ok' },
    { cpu: 'broadwell', label: 'ToPA=0 without TraceEn', value: 0x2004n, want: 'ok' },
  ]))('$label on $on gives $want', ({ cpu, value, want }) => {
    expect(wrRule(msrFile(cpu), CTL, value)).toBe(want);
  });
});

describe('§3.3 rule 9: TraceEn in VMX operation', () => {
  test.for(named([
    { cpu: 'broadwell', label: 'TraceEn=1 after VMXON (VMX_MISC[14]=0)', value: CTL_TOPA_ON, want: 'CTL.9' },
    { cpu: 'broadwell', label: 'TraceEn=0 after VMXON (VMX_MISC[14]=0)', value: 0x2104n, want: 'ok' },
    { cpu: 'skylake', label: 'TraceEn=1 after VMXON (VMX_MISC[14]=1)', value: CTL_TOPA_ON, want: 'ok' },
    { cpu: 'kvm-guest', label: 'TraceEn=0 after VMXON (KVM: any write)', value: 0x4n, want: 'KVM.VMX' },
  ]))('$label on $on gives $want', ({ cpu, value, want }) => {
    const f = msrFile(cpu);
    f.vmxon();
    expect(wrRule(f, CTL, value)).toBe(want);
  });

  test('VMXON with VMX_MISC[14]=0 clears TraceEn (broadwell)', () => {
    const f = msrFile('broadwell');
    f.write(CTL, CTL_TOPA_ON);
    f.vmxon();
    expect(f.ctl).toBe(0x2104n);
  });
});

describe('BDM106: Broadwell needs BranchEn=1 with TraceEn=1', () => {
  test.for(named([
    { cpu: 'broadwell', label: 'TraceEn|OS|ToPA, BranchEn=0', value: 0x105n, want: 'BDM106' },
    { cpu: 'broadwell', label: 'TraceEn|OS|ToPA|BranchEn', value: 0x2105n, want: 'ok' },
    { cpu: 'broadwell', label: 'OS|ToPA, TraceEn=0, BranchEn=0', value: 0x104n, want: 'ok' },
    { cpu: 'skylake', label: 'TraceEn|OS|ToPA, BranchEn=0', value: 0x105n, want: 'ok' },
  ]))('$label on $on gives $want', ({ cpu, value, want }) => {
    expect(wrRule(msrFile(cpu), CTL, value)).toBe(want);
  });
});

