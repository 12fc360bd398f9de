// XSAVES/XRSTORS of PT state (component 8) on the model: docs/sdm/xsave.md §1–§3.
// Offsets are hand-computed: with RFBM = 0x100 the component starts at byte 576.
import { describe, expect, test } from 'vitest';
import { PROFILES, withLeaves } from '../../harness/sim/profiles.js';
import { xrstors, xsaves } from '../../harness/sim/xsave.js';
import { CTL_TOPA_ON, msrFile } from './helpers.js';

const u64 = (a: Uint8Array, off: number) => new DataView(a.buffer, a.byteOffset).getBigUint64(off, true);
const put = (a: Uint8Array, off: number, v: bigint) => new DataView(a.buffer, a.byteOffset).setBigUint64(off, v, true);
const PT = 576;

/** A skylake MSR file with every component-8 MSR set, tracing on. */
function tracing() {
  const f = msrFile('skylake');
  for (const [msr, v] of [
    [0x560, 0x10_0000n], [0x561, (0x20n << 32n) | (1n << 7n)], [0x571, 0x1_0000_0000n], [0x572, 0x5000n],
    [0x580, 0x1000n], [0x581, 0x1fffn], [0x582, 0x3000n], [0x583, 0x3fffn],
  ] as const) expect(f.write(msr, v)).toBeUndefined();
  expect(f.write(0x570, CTL_TOPA_ON)).toBeUndefined();
  return f;
}

describe('XSAVES with RFBM[8]=1 (docs/sdm/xsave.md §2)', () => {
  test('saves CTL as it was, TraceEn=1 included', () => {
    expect(u64(xsaves(tracing(), 0x100n), PT)).toBe(CTL_TOPA_ON);
  });
  test('leaves TraceEn cleared in the MSR', () => {
    const f = tracing();
    xsaves(f, 0x100n);
    expect(f.ctl).toBe(0x2104n);
  });
  test('saves the other eight MSRs in SDM order', () => {
    const a = xsaves(tracing(), 0x100n);
    expect([8, 16, 24, 32, 40, 48, 56, 64].map((o) => u64(a, PT + o))).toEqual([
      0x10_0000n, (0x20n << 32n) | 0xffn, 0x1_0000_0003n, 0x5000n, 0x1000n, 0x1fffn, 0x3000n, 0x3fffn,
    ]);
  });
  test('the saved STATUS has TriggerEn cleared (saved after TraceEn was cleared)', () => {
    const a = xsaves(tracing(), 0x100n);
    expect(u64(a, PT + 24) & 0x4n).toBe(0n);
  });
  test('writes XSTATE_BV = 0x100 and XCOMP_BV = bit 63 | 0x100', () => {
    const a = xsaves(tracing(), 0x100n);
    expect([u64(a, 512), u64(a, 520)]).toEqual([0x100n, 0x8000_0000_0000_0100n]);
  });
  test('reserved bytes 0x48–0x7F are zero and the area ends with the component', () => {
    const a = xsaves(tracing(), 0x100n);
    expect([a.length, a.subarray(PT + 0x48).every((b) => b === 0)]).toEqual([576 + 128, true]);
  });
  test('with AVX in RFBM, component 8 follows AVX at byte 832', () => {
    const a = xsaves(tracing(), 0x104n);
    expect([u64(a, 832), a.length]).toEqual([CTL_TOPA_ON, 832 + 128]);
  });
});

describe('XRSTORS with RFBM[8]=1 (docs/sdm/xsave.md §3)', () => {
  test('restoring the XSAVES image restarts tracing', () => {
    const f = tracing();
    const a = xsaves(f, 0x100n);
    expect(xrstors(f, a, 0x100n)).toBeUndefined();
    expect([f.ctl, f.status & 0x4n]).toEqual([CTL_TOPA_ON, 0x4n]);
  });
  test('TraceEn=1 at XRSTORS raises #GP and changes nothing', () => {
    const f = tracing();
    const a = xsaves(tracing(), 0x100n);
    const base = f.outputBase;
    expect(xrstors(f, a, 0x100n)).toMatchObject({ op: 'xrstors', msr: 0x570 });
    expect([f.ctl, f.outputBase]).toEqual([CTL_TOPA_ON, base]);
  });
  test('XSTATE_BV[8]=0 loads the initial configuration (MASK_PTRS still reads 0x7F)', () => {
    const f = tracing();
    const a = xsaves(f, 0x100n);
    put(a, 512, 0n);
    expect(xrstors(f, a, 0x100n)).toBeUndefined();
    expect([f.ctl, f.status, f.outputBase, f.peek(0x561), f.cr3Match, f.addrA[0], f.addrB[1]]).toEqual([0n, 0n, 0n, 0x7fn, 0n, 0n, 0n]);
  });
  test('a non-zero reserved byte (0x48) raises #GP', () => {
    const f = tracing();
    const a = xsaves(f, 0x100n);
    a[PT + 0x48] = 1;
    expect(xrstors(f, a, 0x100n)).toMatchObject({ op: 'xrstors' });
  });
  test('a CTL image with a reserved bit raises #GP and leaves TraceEn and the other MSRs alone', () => {
    const f = tracing();
    const a = xsaves(f, 0x100n);
    put(a, PT, CTL_TOPA_ON | (1n << 18n));
    put(a, PT + 32, 0x9000n);
    expect(xrstors(f, a, 0x100n)).toMatchObject({ msr: 0x570, value: CTL_TOPA_ON | (1n << 18n) });
    expect([f.ctl, f.cr3Match]).toEqual([0x2104n, 0x5000n]);
  });
  test('an OUTPUT_BASE image with bit 0 raises #GP naming OUTPUT_BASE', () => {
    const f = tracing();
    const a = xsaves(f, 0x100n);
    put(a, PT + 8, 0x10_0001n);
    expect(xrstors(f, a, 0x100n)).toMatchObject({ msr: 0x560 });
  });
  test('XCOMP_BV[63]=0 raises #GP', () => {
    const f = tracing();
    const a = xsaves(f, 0x100n);
    put(a, 520, 0x100n);
    expect(xrstors(f, a, 0x100n)).toMatchObject({ op: 'xrstors' });
  });
  test('a non-zero header byte 16 raises #GP', () => {
    const f = tracing();
    const a = xsaves(f, 0x100n);
    a[512 + 16] = 1;
    expect(xrstors(f, a, 0x100n)).toMatchObject({ op: 'xrstors' });
  });
  test('a non-zero slot for an MSR the CPU lacks raises #GP (Open Question 17: RANGECNT 1, ADDR1_A)', () => {
    const f = msrFile(withLeaves(PROFILES.skylake, 'one-range', [{ leaf: 0x14, subleaf: 1, regs: { eax: 0x0249_0001, ebx: 0x003f_3fff, ecx: 0, edx: 0 } }]));
    const a = xsaves(f, 0x100n);
    expect(u64(a, PT + 0x38)).toBe(0n);
    put(a, PT + 0x38, 0x1000n);
    expect(xrstors(f, a, 0x100n)).toMatchObject({ msr: 0x582 });
  });
  test('full: XRSTORS leaves ADDR2/ADDR3 untouched (only ranges 0 and 1 are in the component)', () => {
    const f = msrFile('full');
    f.write(0x584, 0x7000n);
    const a = xsaves(f, 0x100n);
    f.write(0x584, 0x8000n);
    xrstors(f, a, 0x100n);
    expect(f.addrA[2]).toBe(0x8000n);
  });
});
