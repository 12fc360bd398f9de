// Single-range output: docs/sdm/output.md §3 (address computation, wrap, the three operational errors).
import { describe, expect, test } from 'vitest';
import { bytes, rig, stop } from './output-rig.js';

const SR_CTL = 0x2005n; // TraceEn|OS|BranchEn, ToPA=0

describe('single-range output (docs/sdm/output.md §3)', () => {
  test('the next byte goes to (base & ~mask) + (offset & mask)', async () => {
    const r = rig('skylake', { ctl: SR_CTL, base: 0x20_0000n, maskPtrs: (0x10n << 32n) | 0xfffn });
    await r.out.writeBytes(new Uint8Array([7, 8, 9]));
    expect(r.mem.readNow(0x20_0010n, 3)).toEqual(new Uint8Array([7, 8, 9]));
  });
  test('the range is circular: after the last byte output continues at the base', async () => {
    const r = rig('skylake', { ctl: SR_CTL, base: 0x20_0000n, maskPtrs: (0xffen << 32n) | 0xfffn });
    await r.out.writeBytes(new Uint8Array([1, 2, 3, 4]));
    expect([...r.mem.readNow(0x20_0ffen, 2), ...r.mem.readNow(0x20_0000n, 2)]).toEqual([1, 2, 3, 4]);
  });
  test('TraceEn 1→0 writes the wrapped offset back to MASK_PTRS[63:32]', async () => {
    const r = rig('skylake', { ctl: SR_CTL, base: 0x20_0000n, maskPtrs: (0xffen << 32n) | 0xfffn });
    await r.out.writeBytes(new Uint8Array([1, 2, 3, 4]));
    expect(stop(r)[1]).toBe((2n << 32n) | 0xfffn);
  });
  test('written counts every byte, wrapped ones too', async () => {
    const r = rig('skylake', { ctl: SR_CTL, base: 0x20_0000n, maskPtrs: 0xfffn });
    await r.out.writeBytes(bytes(5000));
    expect(r.out.written).toBe(5000);
  });
  test.for([
    { label: '1: mask not contiguous (0x17F)', base: 0x20_0000n, maskPtrs: 0x17fn },
    { label: '2: base not aligned to the size (0x200800, mask 0xFFF)', base: 0x20_0800n, maskPtrs: 0xfffn },
    { label: '3: offset 0x1000 beyond mask 0xFFF', base: 0x20_0000n, maskPtrs: (0x1000n << 32n) | 0xfffn },
  ])('error $label sets STATUS.Error, clears TriggerEn and writes nothing', async ({ base, maskPtrs }) => {
    const r = rig('skylake', { ctl: SR_CTL, base, maskPtrs });
    await r.out.writeBytes(bytes(16));
    expect([r.f.peek(0x571) & 0x14n, r.out.written]).toEqual([0x10n, 0]);
  });
  test('the largest-offset case (offset = mask) is legal', async () => {
    const r = rig('skylake', { ctl: SR_CTL, base: 0x20_0000n, maskPtrs: (0xfffn << 32n) | 0xfffn });
    await r.out.writeBytes(new Uint8Array([5, 6]));
    expect([...r.mem.readNow(0x20_0fffn, 1), ...r.mem.readNow(0x20_0000n, 1)]).toEqual([5, 6]);
  });
});
