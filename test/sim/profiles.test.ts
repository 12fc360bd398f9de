// CPU profiles: raw CPUID values from docs/sdm/cpuid.md §6–§7 and docs/prior-art.md §5, written by hand.
import { describe, expect, test } from 'vitest';
import { PtError } from '../../driver/base/errors.js';
import { capsOf, cpuidOf, getProfile, PROFILE_NAMES, PROFILES, withLeaves, type ProfileName } from '../../harness/sim/profiles.js';

const regs = (p: ProfileName, leaf: number, sub = 0) => cpuidOf(PROFILES[p], leaf, sub);

describe('leaf 14H', () => {
  test.for([
    { p: 'broadwell', want: { eax: 0, ebx: 0x1, ecx: 0x1, edx: 0 } },
    { p: 'skylake', want: { eax: 1, ebx: 0xf, ecx: 0x7, edx: 0 } },
    { p: 'kvm-guest', want: { eax: 1, ebx: 0xf, ecx: 0x7, edx: 0 } },
    { p: 'full', want: { eax: 1, ebx: 0x1ff, ecx: 0x8000_000f, edx: 0 } },
  ] as const)('CPUID.(14H,0) on $p', ({ p, want }) => {
    expect(regs(p, 0x14, 0)).toEqual(want);
  });
  test.for([
    { p: 'skylake', want: { eax: 0x0249_0002, ebx: 0x003f_3fff, ecx: 0, edx: 0 } },
    { p: 'kvm-guest', want: { eax: 0x0249_0002, ebx: 0x003f_1fff, ecx: 0, edx: 0 } },
    { p: 'icelake', want: { eax: 0x0249_0002, ebx: 0x003f_1fff, ecx: 0, edx: 0 } },
    { p: 'full', want: { eax: 0xffff_0004, ebx: 0x003f_ffff, ecx: 0, edx: 0 } },
  ] as const)('CPUID.(14H,1) on $p', ({ p, want }) => {
    expect(regs(p, 0x14, 1)).toEqual(want);
  });
  test('sub-leaves above the maximum read as zeros (broadwell sub-leaf 1)', () => {
    expect(regs('broadwell', 0x14, 1)).toEqual({ eax: 0, ebx: 0, ecx: 0, edx: 0 });
  });
});

describe('XSAVE leaves', () => {
  test.for([
    { p: 'broadwell', eax: 0x1, ecx: 0 },
    { p: 'skylake', eax: 0xf, ecx: 0x100 },
    { p: 'kvm-guest', eax: 0xf, ecx: 0 },
  ] as const)('CPUID.(0DH,1) EAX/ECX on $p', ({ p, eax, ecx }) => {
    const r = regs(p, 0xd, 1);
    expect([r.eax, r.ecx]).toEqual([eax, ecx]);
  });
  test('CPUID.(0DH,8) is 0x80/0/1 on skylake', () => {
    expect(regs('skylake', 0xd, 8)).toEqual({ eax: 0x80, ebx: 0, ecx: 1, edx: 0 });
  });
  test('CPUID.(0DH,8) is all zeros on kvm-guest (no component 8)', () => {
    expect(regs('kvm-guest', 0xd, 8)).toEqual({ eax: 0, ebx: 0, ecx: 0, edx: 0 });
  });
});

describe('identity and address widths', () => {
  test.for(PROFILE_NAMES)('%s is GenuineIntel with PT in CPUID.07H:EBX[25]', (p) => {
    const c = capsOf(PROFILES[p]);
    expect([c.vendor, c.intelPt]).toEqual(['GenuineIntel', true]);
  });
  test.for([
    { p: 'broadwell', sig: 0x406f1, phys: 46, lin: 48 },
    { p: 'skylake', sig: 0x506e3, phys: 39, lin: 48 },
    { p: 'icelake', sig: 0x606a6, phys: 46, lin: 57 },
    { p: 'sapphire-rapids', sig: 0x806f8, phys: 46, lin: 57 },
  ] as const)('$p has signature $sig, MAXPHYADDR $phys, $lin-bit linear addresses', ({ p, sig, phys, lin }) => {
    expect([regs(p, 1).eax, regs(p, 0x8000_0008).eax]).toEqual([sig, phys | (lin << 8)]);
  });
  test.for([
    { p: 'broadwell', v: 3 }, { p: 'skylake', v: 4 }, { p: 'kvm-guest', v: 2 },
  ] as const)('$p reports PerfMon version $v', ({ p, v }) => {
    expect(regs(p, 0xa).eax & 0xff).toBe(v);
  });
  test('a leaf above the maximum basic leaf returns the highest basic leaf (broadwell: 14H)', () => {
    expect(regs('broadwell', 0x15)).toEqual(regs('broadwell', 0x14));
  });
});

describe('descriptions and quirks', () => {
  test.for([
    { p: 'broadwell', synthetic: false }, { p: 'skylake', synthetic: false },
    { p: 'icelake', synthetic: true }, { p: 'sapphire-rapids', synthetic: true },
    { p: 'kvm-guest', synthetic: true }, { p: 'full', synthetic: true },
  ] as const)('$p: description says "synthetic" = $synthetic', ({ p, synthetic }) => {
    expect([PROFILES[p].synthetic, /synthetic/i.test(PROFILES[p].description)]).toEqual([synthetic, synthetic]);
  });
  test('broadwell (06_4F stepping 1 in CPUID.1:EAX) has erratum BDM106 and no quirk', () => {
    expect([cpuidOf(PROFILES.broadwell, 1, 0).eax, PROFILES.broadwell.errata.has('BDM106'), PROFILES.broadwell.quirks.size]).toEqual([0x406f1, true, 0]);
  });
  test.for([
    { p: 'broadwell', errata: ['BDM106', 'BDW-SINGLE-TOPA', 'BDM70', 'BDM64'] },
    { p: 'skylake', errata: ['BDM70', 'SKD007', 'SKD022', 'SKD010', 'SKL014', 'SKL168'] },
    { p: 'icelake', errata: ['BDM70', 'SKD022', 'SKL014', 'SKZ84'] },
    { p: 'sapphire-rapids', errata: ['BDM70', 'SKD022', 'SKL014', 'SKZ84'] },
    { p: 'full', errata: [] },
  ] as const)('$p has the errata of its family/model: $errata', ({ p, errata }) => {
    expect([...PROFILES[p].errata]).toEqual(errata);
  });
  test('the errata follow the signature in CPUID.1:EAX, not the profile', () => {
    const asBroadwell = withLeaves(PROFILES.skylake, 'skylake-as-0x3d', [{ leaf: 1, regs: { ...cpuidOf(PROFILES.skylake, 1, 0), eax: 0x306d4 } }]);
    expect([asBroadwell.family, asBroadwell.model, asBroadwell.stepping, asBroadwell.errata.has('BDM106')]).toEqual([6, 0x3d, 4, true]);
    const notIntel = withLeaves(PROFILES.broadwell, 'broadwell-not-intel', [{ leaf: 0, regs: { eax: 0x14, ebx: 0x6874_7541, ecx: 0x444d_4163, edx: 0x6974_6e65 } }]);
    expect(notIntel.errata.size).toBe(0);
  });
  test('kvm-guest carries the KVM #GP rules', () => {
    expect([...PROFILES['kvm-guest'].quirks].sort()).toEqual(['KVM_CR3_MATCH_LAX', 'KVM_CTL_BITMASK', 'KVM_STATUS_MASK', 'KVM_VMX_CTL']);
  });
  test('broadwell is single-entry ToPA without single range', () => {
    const c = capsOf(PROFILES.broadwell);
    expect([c.topaOutput, c.topaMultipleEntries, c.singleRangeOutput]).toEqual([true, false, false]);
  });
  test('an unknown --cpu name throws PtError bad_config', () => {
    expect(() => getProfile('pentium')).toThrow(PtError);
  });
});
