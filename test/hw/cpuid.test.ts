import { describe, expect, test } from 'vitest';
import { cpuidBitName, decodePtCaps, type PtCaps } from '../../driver/hw/cpuid.js';
import { BROADWELL_E, caps, KABY_LAKE, KABY_LAKE_R, NO_PT_BIT, QEMU_PT, QEMU_TCG_MAX, reader } from './fixtures.js';

// Expected capabilities written by hand from docs/sdm/cpuid.md §2, §3, §6 ("How to decode the
// Skylake/Kaby Lake values") — not recomputed from the rows under test.
const KBL_EXPECTED: PtCaps = {
  maxBasicLeaf: 0x16, vendor: 'GenuineIntel',
  intelPt: true, maxSubleaf: 1,
  cr3Filtering: true, psbCyc: true, ipFiltering: true, mtc: true,
  ptwrite: false, powerEvents: false, pmiPreservation: false, eventTrace: false, tntDisable: false,
  topaOutput: true, topaMultipleEntries: true, singleRangeOutput: true, transportOutput: false, lip: false,
  numAddressRanges: 2, mtcPeriods: 0x0249, cycThresholds: 0x3fff, psbPeriods: 0x003f,
  xsaves: true, xssPtState: true, ptStateSize: 0,
  maxPhysAddr: 39, maxLinearAddr: 48,
};

describe('decodePtCaps on the real dumps of docs/sdm/cpuid.md §6', () => {
  test('Kaby Lake (Pentium G4600) decodes to CR3/PSB-CYC/IP-filter/MTC, ToPA+MENTRY+single range, 2 ranges', () => {
    expect(caps(KABY_LAKE)).toEqual(KBL_EXPECTED);
  });

  test('Kaby Lake-R additionally reports a 128-byte PT state component', () => {
    expect(caps(KABY_LAKE_R)).toEqual({ ...KBL_EXPECTED, ptStateSize: 128 });
  });

  test('Broadwell-E has only CR3 filtering and single-entry ToPA, and its sub-leaf 1 is ignored', () => {
    expect(caps(BROADWELL_E)).toEqual({
      maxBasicLeaf: 0x14, vendor: 'GenuineIntel',
      intelPt: true, maxSubleaf: 0,
      cr3Filtering: true, psbCyc: false, ipFiltering: false, mtc: false,
      ptwrite: false, powerEvents: false, pmiPreservation: false, eventTrace: false, tntDisable: false,
      topaOutput: true, topaMultipleEntries: false, singleRangeOutput: false, transportOutput: false, lip: false,
      numAddressRanges: 0, mtcPeriods: 0, cycThresholds: 0, psbPeriods: 0,
      xsaves: false, xssPtState: false, ptStateSize: 0,
      maxPhysAddr: 46, maxLinearAddr: 48,
    } satisfies PtCaps);
  });

  test("QEMU's fixed leaf 14H has the smaller cycle-threshold bitmap 0x1FFF", () => {
    expect(caps(QEMU_PT)).toEqual({ ...KBL_EXPECTED, cycThresholds: 0x1fff });
  });
});

describe('when leaf 14H is not trusted', () => {
  test('QEMU TCG -cpu max (max basic leaf 0xD) reports no PT even though leaf 0x14 returns leaf 0xD data', () => {
    const c = caps(QEMU_TCG_MAX);
    expect(c.intelPt).toBe(false);
    expect(c.maxBasicLeaf).toBe(0xd);
    expect(c.vendor).toBe('AuthenticAMD');
    // Leaf 0xD's EAX (0x21F) would otherwise read as maxSubleaf and CR3/PSB/IP-filter/MTC…
    expect([c.maxSubleaf, c.cr3Filtering, c.psbCyc, c.ipFiltering, c.topaOutput]).toEqual([0, false, false, false, false]);
  });

  test('a max basic leaf below 14H ignores leaf 14H even when leaf 7 EBX[25] = 1', () => {
    const c = decodePtCaps(reader({ ...KABY_LAKE, '0:0': { ...KABY_LAKE['0:0'], eax: 0xd }, 'd:0': { eax: 1, ebx: 0xf, ecx: 0x7 } }));
    expect(c.intelPt).toBe(true);
    expect([c.maxSubleaf, c.cr3Filtering, c.topaOutput, c.singleRangeOutput, c.numAddressRanges]).toEqual([0, false, false, false, 0]);
  });

  test('leaf 7 EBX[25] = 0 ignores a populated leaf 14H', () => {
    const c = caps(NO_PT_BIT);
    expect(c.intelPt).toBe(false);
    expect([c.cr3Filtering, c.psbCyc, c.topaOutput, c.numAddressRanges, c.mtcPeriods]).toEqual([false, false, false, 0, 0]);
  });

  test('sub-leaf 1 is ignored when L14.0.EAX = 0', () => {
    const c = decodePtCaps(reader({ ...KABY_LAKE, '14:0': { eax: 0, ebx: 0xf, ecx: 0x7 } }));
    expect([c.numAddressRanges, c.mtcPeriods, c.cycThresholds, c.psbPeriods]).toEqual([0, 0, 0, 0]);
    expect(c.psbCyc).toBe(true);
  });

  test('without leaf 80000008H MAXPHYADDR defaults to 36 and the linear width to 48', () => {
    const c = decodePtCaps(reader({ ...KABY_LAKE, '80000000:0': { eax: 0x8000_0004 } }));
    expect([c.maxPhysAddr, c.maxLinearAddr]).toEqual([36, 48]);
  });
});

test.for([
  { cap: 'intelPt', want: 'CPUID.(EAX=07H,ECX=0):EBX[25]' },
  { cap: 'xsaves', want: 'CPUID.(EAX=0DH,ECX=1):EAX[3]' },
  { cap: 'psbCyc', want: 'CPUID.(EAX=14H,ECX=0):EBX[1]' },
  { cap: 'psbPeriods', want: 'CPUID.(EAX=14H,ECX=1):EBX[31:16]' },
  { cap: 'maxPhysAddr', want: 'CPUID.80000008H:EAX[7:0]' },
] as const)('cpuidBitName names $cap as $want', ({ cap, want }) => {
  expect(cpuidBitName(cap)).toBe(want);
});
