// image.json's CPU identity and result.json's libipt command lines (harness/rundir/interop.ts).
import { describe, expect, test } from 'vitest';
import { identityOf, libiptCommands, vendorOf } from '../../harness/rundir/interop.js';

describe('the CPU identity of CPUID leaves 0 and 1 (SDM Vol. 2A, CPUID 01H)', () => {
  test.for([
    { what: 'family 6 prepends the extended model (Ice Lake server 6/0x6a/6)', eax: 0x000606a6, want: { family: 6, model: 0x6a, stepping: 6 } },
    { what: 'family 0xF adds the extended family and prepends the extended model', eax: 0x00f10f21, want: { family: 0x1e, model: 0x12, stepping: 1 } },
    { what: 'other families take neither extension', eax: 0x00010551, want: { family: 5, model: 5, stepping: 1 } },
  ])('$what', ({ eax, want }) => {
    expect(identityOf('GenuineIntel', eax)).toEqual({ vendor: 'GenuineIntel', ...want });
  });

  test('the vendor string is EBX, EDX, ECX of leaf 0', () => {
    expect(vendorOf(0x756e6547, 0x6c65746e, 0x49656e69)).toBe('GenuineIntel');
  });
});

describe('libipt command lines', () => {
  test('give only the timing values the CPU reported', () => {
    const cpu = { vendor: 'GenuineIntel', family: 6, model: 0x4f, stepping: 1 };
    expect(libiptCommands(cpu, { mtcFreq: null, nomFreq: null, cpuid15: null }, 0x10000000n)).toEqual({
      ptdump: 'ptdump --cpu 6/79/1 trace.pt',
      ptxed: 'ptxed --cpu 6/79/1 --pt trace.pt --raw image.bin:0x10000000',
    });
  });
});
