// The guest-RAM file without a VM (harness/qemu/ram-file.ts): the mapped path through the
// ram-map addon and the pread fallback must agree byte for byte, across window edges, and both
// must refuse bad ranges with typed errors. A plain file in /dev/shm stands in for QEMU's
// memory-backend file (both are tmpfs files opened shared).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { findNodeHeaders, loadRamMap, nodeHeaderCandidates } from '../../harness/qemu/ram-map-addon.js';
import { openRamFile, type RamAccess } from '../../harness/qemu/ram-file.js';

const PAGE = 4096;
const WINDOW = 4 * PAGE;
const SIZE = 10 * PAGE + 100; // the last window is short and ends inside a page

const shmRoot = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
let dir: string;
let path: string;
let pattern: Uint8Array;

beforeAll(async () => {
  dir = await mkdtemp(join(shmRoot, 'ptlab-ramfile-'));
  path = join(dir, 'ram');
  pattern = Uint8Array.from({ length: SIZE }, (_, i) => (i * 31 + (i >> 12)) & 0xff);
});
afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

function freshFile(): void {
  writeFileSync(path, pattern);
}

describe('the ram-map addon', () => {
  test('builds against this Node\'s headers and loads', async () => {
    const loaded = await loadRamMap();
    expect('unavailable' in loaded ? loaded.unavailable : 'loaded').toBe('loaded');
  });

  test('header search honours PTLAB_NODE_HEADERS first and reports none found', () => {
    expect(nodeHeaderCandidates({ PTLAB_NODE_HEADERS: '/x/include/node' })[0]).toBe('/x/include/node');
    expect(findNodeHeaders(['/nonexistent/a', '/nonexistent/b'])).toBeUndefined();
  });

  test('refuses to release or populate an ArrayBuffer it did not map', async () => {
    const loaded = await loadRamMap();
    if (!('addon' in loaded)) throw new Error(loaded.unavailable);
    const plain = new ArrayBuffer(PAGE);
    expect(() => loaded.addon.release(plain)).toThrow(/not a window that map\(\) returned/);
    expect(() => loaded.addon.populate(plain, 0, 1)).toThrow(/not a window/);
    expect(() => loaded.addon.map(-1, 0, PAGE)).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(() => loaded.addon.map(0, 1, PAGE)).toThrow(/multiple of the page size/);
  });
});

describe.each(['mmap', 'pread'] satisfies RamAccess[])('RamFile (%s)', (access) => {
  test('reads what the file holds, across window edges and into the short last window', async () => {
    freshFile();
    const f = await openRamFile(path, 1 << 30, { access, windowBytes: WINDOW });
    try {
      expect(f.access).toBe(access);
      expect(f.size).toBe(SIZE);
      for (const [off, len] of [[0, SIZE], [WINDOW - 3, 7], [WINDOW - 1, WINDOW + 2], [SIZE - 5, 5], [123, 0]] as const) {
        const into = new Uint8Array(len);
        f.readInto(off, into);
        expect(Buffer.from(into).equals(Buffer.from(pattern.subarray(off, off + len))), `${off}+${len}`).toBe(true);
      }
    } finally { f.close(); }
  });

  test('writes land in the file at once, across a window edge', async () => {
    freshFile();
    const f = await openRamFile(path, 1 << 30, { access, windowBytes: WINDOW });
    try {
      const data = Uint8Array.from({ length: 10 }, (_, i) => 0xa0 + i);
      f.write(WINDOW - 4, data);
      const disk = readFileSync(path);
      expect([...disk.subarray(WINDOW - 4, WINDOW + 6)]).toEqual([...data]);
      expect(disk[WINDOW - 5]).toBe(pattern[WINDOW - 5]);
      expect(disk[WINDOW + 6]).toBe(pattern[WINDOW + 6]);
    } finally { f.close(); }
  });

  test('populate keeps the bytes and refuses a range outside the file', async () => {
    freshFile();
    const f = await openRamFile(path, 1 << 30, { access, windowBytes: WINDOW });
    try {
      f.populate(PAGE + 17, 3 * PAGE);
      f.populate(0, SIZE);
      expect(readFileSync(path).equals(Buffer.from(pattern))).toBe(true);
      expect(() => f.populate(SIZE - 1, 2)).toThrow(expect.objectContaining({ code: 'bad_address' }));
    } finally { f.close(); }
  });

  test('a range past the end, a negative offset or a fractional one is PtError bad_address (never a crash)', async () => {
    freshFile();
    const f = await openRamFile(path, 1 << 30, { access, windowBytes: WINDOW });
    try {
      expect(() => f.readInto(SIZE - 1, new Uint8Array(2))).toThrow(expect.objectContaining({ code: 'bad_address' }));
      expect(() => f.readInto(-1, new Uint8Array(1))).toThrow(expect.objectContaining({ code: 'bad_address' }));
      expect(() => f.write(0.5, new Uint8Array(1))).toThrow(expect.objectContaining({ code: 'bad_address' }));
    } finally { f.close(); }
  });

  test('the size is capped by the limit, and after close every access is PtError bad_state', async () => {
    freshFile();
    const f = await openRamFile(path, 2 * PAGE, { access, windowBytes: WINDOW });
    expect(f.size).toBe(2 * PAGE);
    expect(() => f.readInto(2 * PAGE, new Uint8Array(1))).toThrow(expect.objectContaining({ code: 'bad_address' }));
    f.close();
    f.close();
    expect(() => f.readInto(0, new Uint8Array(1))).toThrow(expect.objectContaining({ code: 'bad_state' }));
    expect(() => f.write(0, new Uint8Array(1))).toThrow(expect.objectContaining({ code: 'bad_state' }));
  });
});

describe('the mapped file', () => {
  test('while open the file is mapped; after close no mapping of it is left (its memory is freed when removed)', async () => {
    const big = join(dir, 'big');
    writeFileSync(big, new Uint8Array(4 << 20).fill(1));
    const mapsOf = (): string[] => readFileSync('/proc/self/maps', 'utf8').split('\n').filter((l) => l.endsWith(big));
    const f = await openRamFile(big, 1 << 30, { access: 'mmap' });
    f.populate(0, 4 << 20);
    expect(mapsOf().length).toBeGreaterThan(0);
    f.close();
    expect(mapsOf()).toEqual([]);
    await rm(big);
  });

  test('PTLAB_RAM_ACCESS=pread selects the fallback and says why; a bad value is PtError bad_config', async () => {
    freshFile();
    const saved = process.env['PTLAB_RAM_ACCESS'];
    try {
      process.env['PTLAB_RAM_ACCESS'] = 'pread';
      const f = await openRamFile(path, 1 << 30);
      expect(f.access).toBe('pread');
      expect(f.unmappedReason).toMatch(/pread was asked for/);
      f.close();
      process.env['PTLAB_RAM_ACCESS'] = 'mmapp';
      await expect(openRamFile(path, 1 << 30)).rejects.toMatchObject({ code: 'bad_config' });
    } finally {
      if (saved === undefined) delete process.env['PTLAB_RAM_ACCESS'];
      else process.env['PTLAB_RAM_ACCESS'] = saved;
    }
  });
});
