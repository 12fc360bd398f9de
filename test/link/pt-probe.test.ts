// The CPUID-only PT probe (harness/link/pt-probe.ts) on recorded CPUID values.
import { describe, expect, test } from 'vitest';
import { UnsupportedError } from '../../driver/base/errors.js';
import { judgePt, ptRefusal } from '../../harness/link/pt-probe.js';

/** "GenuineIntel" as CPUID.0 returns it: EBX "Genu", EDX "ineI", ECX "ntel". */
const INTEL = { ebx: 0x756e_6547, edx: 0x4965_6e69, ecx: 0x6c65_746e };
/** "AuthenticAMD": EBX "Auth", EDX "enti", ECX "cAMD" (QEMU -cpu max under TCG: docs/qemu.md §5). */
const AMD = { ebx: 0x6874_7541, edx: 0x6974_6e65, ecx: 0x444d_4163 };

describe('judgePt', () => {
  test('GenuineIntel, max leaf 0x1B and leaf 7 EBX[25] set: PT is available', () => {
    expect(judgePt({ eax: 0x1b, ...INTEL }, { eax: 0, ebx: 1 << 25, ecx: 0, edx: 0 })).toMatchObject({ available: true, vendor: 'GenuineIntel' });
  });

  test.for([
    { name: 'TCG -cpu max: AuthenticAMD, max leaf 0xD', leaf0: { eax: 0xd, ...AMD }, leaf7: { eax: 0, ebx: 0x01d8_43a9, ecx: 0, edx: 0 }, cpuid: 'CPUID.0 vendor' },
    { name: 'Intel with max leaf 0xD', leaf0: { eax: 0xd, ...INTEL }, leaf7: { eax: 0, ebx: 1 << 25, ecx: 0, edx: 0 }, cpuid: 'CPUID.0:EAX' },
    { name: 'TCG -cpu max,+intel-pt: max leaf 0x14 but EBX[25] = 0', leaf0: { eax: 0x14, ...INTEL }, leaf7: { eax: 0, ebx: 0, ecx: 0, edx: 0 }, cpuid: 'CPUID.(EAX=07H,ECX=0):EBX[25]' },
  ])('$name: refused naming $cpuid', ({ leaf0, leaf7, cpuid }) => {
    expect(judgePt(leaf0, leaf7)).toMatchObject({ available: false, cpuid });
  });

  test('the refusal is an UnsupportedError that points at --pt model and ptlab doctor', () => {
    const p = judgePt({ eax: 0x14, ...INTEL }, { eax: 0, ebx: 0, ecx: 0, edx: 0 });
    if (p.available) throw new Error('expected no PT');
    const e = ptRefusal(p, 'the guest CPU');
    expect(e).toBeInstanceOf(UnsupportedError);
    expect(e.message).toMatch(/CPUID\.\(EAX=07H,ECX=0\):EBX\[25\] = 0.*--pt model.*ptlab doctor/);
  });
});
