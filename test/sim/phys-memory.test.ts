// SparsePhysMemory: size-aligned, zero-filled allocation, sparse pages, typed errors
// (driver/target.ts PhysMemory).
import { describe, expect, test } from 'vitest';
import { AllocationError, PtError } from '../../driver/base/errors.js';
import { SparsePhysMemory } from '../../harness/sim/phys-memory.js';

const mem = () => new SparsePhysMemory({ ramSize: 64 * 2 ** 20, maxContiguous: 4 * 2 ** 20 });

describe('allocation', () => {
  test.for([
    { size: 4096, align: 4096 },
    { size: 8192, align: 8192 },
    { size: 2 ** 21, align: 2 ** 21 },
    { size: 4 * 2 ** 20, align: 4 * 2 ** 20 },
    { size: 100, align: 128 },
  ])('a $size-byte region is $align-aligned', async ({ size, align }) => {
    const m = mem();
    await m.alloc(4096, 4096); // push the next block off the first aligned address
    const r = await m.alloc(size, align);
    expect([r.base % BigInt(align), r.size]).toEqual([0n, size]);
  });
  test('regions do not overlap', async () => {
    const m = mem();
    const a = await m.alloc(8192, 4096), b = await m.alloc(8192, 4096);
    expect(a.base + 8192n <= b.base || b.base + 8192n <= a.base).toBe(true);
  });
  test('a region is zero-filled even where freed memory held data', async () => {
    const m = mem();
    const a = await m.alloc(8192, 8192);
    await m.write(a.base + 100n, new Uint8Array([1, 2, 3]));
    await m.free(a);
    const b = await m.alloc(8192, 8192);
    expect(b.base).toBe(a.base);
    expect((await m.read(b.base, 8192)).every((x) => x === 0)).toBe(true);
  });
  test('more than maxContiguous raises AllocationError', async () => {
    await expect(mem().alloc(8 * 2 ** 20, 4096)).rejects.toBeInstanceOf(AllocationError);
  });
  test('running out of RAM raises AllocationError with code alloc_failed', async () => {
    const m = new SparsePhysMemory({ ramSize: 2 ** 20 + 8192, maxContiguous: 4096 });
    await m.alloc(4096, 4096);
    await m.alloc(4096, 4096);
    await expect(m.alloc(4096, 4096)).rejects.toMatchObject({ code: 'alloc_failed' });
  });
  test('an alignment that is not a power of two raises AllocationError', async () => {
    await expect(mem().alloc(4096, 3000)).rejects.toBeInstanceOf(AllocationError);
  });
  test('freed blocks merge so a large region fits again', async () => {
    const m = new SparsePhysMemory({ ramSize: 2 ** 20 + 2 ** 16, maxContiguous: 2 ** 16 });
    const parts = [];
    for (let i = 0; i < 16; i++) parts.push(await m.alloc(4096, 4096));
    for (const p of parts) await m.free(p);
    expect((await m.alloc(2 ** 16, 2 ** 16)).size).toBe(2 ** 16);
  });
  test('freeing something that was not allocated raises bad_address', async () => {
    await expect(mem().free({ base: 0x20_0000n, size: 4096 })).rejects.toMatchObject({ code: 'bad_address' });
  });
});

describe('read and write', () => {
  test('data written across a page boundary reads back', async () => {
    const m = mem();
    const r = await m.alloc(8192, 4096);
    const data = Uint8Array.from({ length: 300 }, (_, i) => i & 0xff);
    await m.write(r.base + 0xf80n, data);
    expect(await m.read(r.base + 0xf80n, 300)).toEqual(data);
  });
  test('never-written RAM reads as zeros (the CPU\'s access, which reaches all of RAM)', async () => {
    expect(mem().readNow(0x30_0000n, 16)).toEqual(new Uint8Array(16));
  });
  test('the driver\'s reads and writes reach only allocated regions, as on a real target', async () => {
    const m = mem();
    const r = await m.alloc(4096, 4096);
    await expect(m.read(r.base + 4096n, 1)).rejects.toMatchObject({ code: 'bad_address' });
    await expect(m.write(r.base - 1n, new Uint8Array(2))).rejects.toMatchObject({ code: 'bad_address' });
    expect([m.owns(r.base, 4096), m.owns(r.base + 1n, 4096), m.owns(r.base + 4096n, 1)]).toEqual([true, false, false]);
  });
  test.for([
    { addr: 64n * 2n ** 20n, len: 1 },
    { addr: 64n * 2n ** 20n - 1n, len: 2 },
    { addr: -1n, len: 1 },
    { addr: 1n << 60n, len: 1 },
  ])('access at $addr (+$len) outside RAM raises PtError bad_address', async ({ addr, len }) => {
    const m = mem();
    await expect(m.read(addr, len)).rejects.toSatisfy((e) => e instanceof PtError && e.code === 'bad_address');
    await expect(m.write(addr, new Uint8Array(len))).rejects.toSatisfy((e) => e instanceof PtError && e.code === 'bad_address');
  });
  test('the last byte of RAM is accessible to the CPU', async () => {
    const m = mem();
    m.writeNow(64n * 2n ** 20n - 1n, new Uint8Array([7]));
    expect(m.readNow(64n * 2n ** 20n - 1n, 1)).toEqual(new Uint8Array([7]));
  });
  test('an aborted signal rejects with PtError aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(mem().read(0x20_0000n, 1, { signal: ac.signal })).rejects.toMatchObject({ code: 'aborted' });
  });
});
