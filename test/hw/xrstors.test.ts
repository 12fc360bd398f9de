import { describe, expect, test } from 'vitest';
import { xrstorsPtProblem, type XrstorsContext } from '../../driver/hw/xrstors.js';
import { buildPtXsaveArea, type PtState } from '../../driver/hw/xsave.js';
import { CAPS } from './fixtures.js';

const STATE: Partial<PtState> = {
  IA32_RTIT_CTL: 0x2105n, // TraceEn OS ToPA BranchEn
  IA32_RTIT_OUTPUT_BASE: 0x10_0000n,
  IA32_RTIT_OUTPUT_MASK_PTRS: 0x10_0000_017fn,
  IA32_RTIT_STATUS: 0x20_0000_0000n, // PacketByteCnt 0x20
  IA32_RTIT_ADDR1_A: 0xffff_8000_0000_0000n,
};
const CTX: XrstorsContext = { cpu: { caps: CAPS.kbl }, state: { ctl: 0n }, rfbm: 0x100n, enabled: 0x100n, address: 0x4000n };
const area = (s: Partial<PtState> = STATE): Uint8Array => buildPtXsaveArea({ state: s });

describe('xrstorsPtProblem (docs/sdm/xsave.md §3)', () => {
  test('a valid Kaby Lake image restores without #GP', () => {
    expect(xrstorsPtProblem(area(), CTX)).toBeUndefined();
  });

  test('a header problem comes first', () => {
    expect(xrstorsPtProblem(area(), { ...CTX, enabled: 0n })).toMatchObject({ kind: 'header', rule: 'XCOMP_BV' });
  });

  test('RFBM[8] = 0 leaves PT state alone, whatever the image holds', () => {
    expect(xrstorsPtProblem(area({ IA32_RTIT_STATUS: 0x8n }), { ...CTX, rfbm: 0n })).toBeUndefined();
  });

  test('TraceEn = 1 at the time of XRSTORS raises #GP', () => {
    expect(xrstorsPtProblem(area(), { ...CTX, state: { ctl: 0x2105n } })?.kind).toBe('trace-en');
  });

  test('XSTATE_BV[8] = 0 loads the initial configuration without looking at the bytes', () => {
    const a = area({ IA32_RTIT_STATUS: 0x8n });
    a[513] = 0; // XSTATE_BV = 0 (bit 8 is in byte 513)
    expect(xrstorsPtProblem(a, CTX)).toBeUndefined();
  });

  test('a non-zero reserved byte raises #GP', () => {
    const a = area();
    a[576 + 0x50] = 1;
    expect(xrstorsPtProblem(a, CTX)).toMatchObject({ kind: 'reserved-byte', offset: 0x50 });
  });

  test('an image STATUS with reserved bit 3 raises #GP under the WRMSR rules', () => {
    expect(xrstorsPtProblem(area({ ...STATE, IA32_RTIT_STATUS: 0x8n }), CTX)).toMatchObject({ kind: 'msr', msr: 0x571, rule: 'STATUS.reserved' });
  });

  test('an image CTL with reserved bit 18 raises #GP', () => {
    expect(xrstorsPtProblem(area({ ...STATE, IA32_RTIT_CTL: 0x4_2105n }), CTX)).toMatchObject({ kind: 'msr', msr: 0x570, rule: 'CTL.2' });
  });

  test('TraceEn = 1 in the image does not trip the TraceEn rule (G3) for the other MSRs', () => {
    expect(xrstorsPtProblem(area({ ...STATE, IA32_RTIT_CR3_MATCH: 0x1000n }), CTX)).toBeUndefined();
  });

  test('the slot of an MSR the CPU lacks may be 0', () => {
    expect(xrstorsPtProblem(area({ IA32_RTIT_CTL: 0x4n }), { ...CTX, cpu: { caps: CAPS.none } })).toBeUndefined();
  });

  test('the reason names the MSR and the rule of the shared WRMSR rules', () => {
    expect(xrstorsPtProblem(area({ ...STATE, IA32_RTIT_STATUS: 0x8n }), CTX)?.reason).toBe('IA32_RTIT_STATUS: STATUS.reserved: reserved bit 3 set');
  });

  test('XRSTORS at CPL 3 is a header problem', () => {
    expect(xrstorsPtProblem(area(), { ...CTX, state: { ctl: 0n, cpl: 3 } })).toMatchObject({ kind: 'header', rule: 'CPL' });
  });

  test('a non-zero slot of an MSR the CPU lacks raises #GP (Open Question 17)', () => {
    expect(xrstorsPtProblem(area({ IA32_RTIT_CR3_MATCH: 0x1000n }), { ...CTX, cpu: { caps: CAPS.none } })).toMatchObject({ kind: 'msr', msr: 0x572, rule: 'G2' });
  });
});
