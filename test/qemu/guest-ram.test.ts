// Guest physical address → offset in the shared RAM file (q35 layout), and GuestRam's paths to
// that file (mapped, pread, or none), without a VM.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GuestRam, physToFileOffset, q35RamLayout } from '../../harness/qemu/guest-ram.js';
import type { QmpClient } from '../../harness/qemu/qmp.js';

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

describe('GuestRam over a RAM file, without a VM', () => {
  const PAGE = 4096;
  let dir: string;
  let path: string;
  // No QMP call happens on these paths: reads and writes go through the file.
  const noQmp = undefined as unknown as QmpClient;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ptlab-guestram-'));
    path = join(dir, 'ram');
    await writeFile(path, Uint8Array.from({ length: 16 * PAGE }, (_, i) => i & 0xff));
  });
  afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

  test.for(['mmap', 'pread'] as const)('%s: access is reported, reads honour `into`, writes reach the file', async (access) => {
    await using ram = await GuestRam.open(path, BigInt(16 * PAGE), noQmp, dir, { access });
    expect(ram.access).toBe(access);
    expect(ram.slowPathReason === undefined).toBe(access === 'mmap');
    const into = new Uint8Array(10).fill(0xee);
    const got = await ram.read(0x1001n, 4, { into });
    expect([...got]).toEqual([1, 2, 3, 4]);
    expect(got.buffer).toBe(into.buffer);
    await ram.write(0x2000n, Uint8Array.of(0xaa, 0xbb));
    ram.populate(0x2000n, PAGE);
    expect([...(await ram.read(0x1fffn, 4))]).toEqual([0xff, 0xaa, 0xbb, 0x02]);
    await expect(ram.write(BigInt(16 * PAGE), Uint8Array.of(1))).rejects.toMatchObject({ phase: 'memory', failure: 'io' });
  });

  test('a bad PTLAB_RAM_ACCESS fails the open instead of falling back quietly', async () => {
    const saved = process.env['PTLAB_RAM_ACCESS'];
    process.env['PTLAB_RAM_ACCESS'] = 'fast';
    try {
      await expect(GuestRam.open(path, BigInt(16 * PAGE), noQmp, dir)).rejects.toMatchObject({ code: 'bad_config' });
    } finally {
      if (saved === undefined) delete process.env['PTLAB_RAM_ACCESS'];
      else process.env['PTLAB_RAM_ACCESS'] = saved;
    }
  });

  test('without a RAM file the reason is kept and writes are refused with it', async () => {
    await using ram = await GuestRam.open(join(dir, 'missing'), BigInt(16 * PAGE), noQmp, dir);
    expect(ram.access).toBe('pmemsave');
    expect(ram.slowPathReason).toMatch(/ENOENT/);
    await expect(ram.write(0n, Uint8Array.of(1))).rejects.toThrow(/not shared with the host: .*ENOENT/);
  });
});
