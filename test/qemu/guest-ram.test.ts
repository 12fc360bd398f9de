// Guest physical address → offset in the shared RAM file (q35 layout), without a VM.
import { describe, expect, test } from 'vitest';
import { physToFileOffset, q35RamLayout } from '../../harness/qemu/guest-ram.js';

const MiB = 1n << 20n;
const GiB = 1n << 30n;

describe('q35RamLayout', () => {
  test.for([
    { ram: 256n * MiB, below: 256n * MiB, above: 0n },
    // Below 0xB0000000 bytes all RAM stays low (QEMU hw/i386/pc_q35.c).
    { ram: 0xa000_0000n, below: 0xa000_0000n, above: 0n },
    // From 0xB0000000 bytes on, only 2 GiB stay low and the rest starts at 4 GiB.
    { ram: 0xb000_0000n, below: 2n * GiB, above: 0x3000_0000n },
    { ram: 4n * GiB, below: 2n * GiB, above: 2n * GiB },
  ])('$ram bytes of RAM put $below below 4 GiB', ({ ram, below, above }) => {
    expect(q35RamLayout(ram)).toEqual({ below4g: below, above4g: above });
  });
});

describe('physToFileOffset', () => {
  const small = q35RamLayout(256n * MiB);
  const big = q35RamLayout(4n * GiB);

  test.for([
    { name: 'low RAM maps to the same offset', layout: small, pa: 0x2994000n, len: 4096, want: 0x2994000n },
    { name: 'the last byte of low RAM', layout: small, pa: 256n * MiB - 1n, len: 1, want: 256n * MiB - 1n },
    { name: 'a range crossing the end of RAM', layout: small, pa: 256n * MiB - 1n, len: 2, want: undefined },
    { name: 'the hole below 4 GiB', layout: big, pa: 3n * GiB, len: 1, want: undefined },
    { name: 'high RAM follows low RAM in the file', layout: big, pa: 4n * GiB + 0x1000n, len: 16, want: 2n * GiB + 0x1000n },
    { name: 'past the end of high RAM', layout: big, pa: 6n * GiB, len: 1, want: undefined },
  ])('$name', ({ layout, pa, len, want }) => {
    expect(physToFileOffset(pa, len, layout)).toBe(want);
  });
});
