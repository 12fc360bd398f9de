import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { guestRamPath, reapStaleGuestRam } from '../../harness/qemu/stale-ram.js';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ptlab-stale-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

test('a guest-RAM file is named after the controlling process', () => {
  expect(guestRamPath('/dev/shm', 4242)).toMatch(/^\/dev\/shm\/ptlab-4242-[0-9a-f]{16}$/);
});

test('files of dead controllers are removed; live ones and other files stay', async () => {
  for (const n of ['ptlab-111-ab12', 'ptlab-222-cd34', 'ptlab-notapid', 'other-111-ab12']) await writeFile(join(dir, n), '');
  const removed = await reapStaleGuestRam(dir, (pid) => pid === 222);
  expect(removed).toEqual(['ptlab-111-ab12']);
  expect((await readdir(dir)).sort()).toEqual(['other-111-ab12', 'ptlab-222-cd34', 'ptlab-notapid']);
});

test('the real liveness check keeps the file of this very process', async () => {
  await writeFile(join(dir, `ptlab-${process.pid}-00ff`), '');
  expect(await reapStaleGuestRam(dir)).toEqual([]);
});
