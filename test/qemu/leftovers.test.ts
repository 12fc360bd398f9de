// What a controller killed with SIGKILL leaves behind (harness/qemu/leftovers.ts): QEMU started
// with a parent-death signal dies with its controller, and the next launch removes whatever a dead
// controller still left: its QEMU processes, guest-RAM files and socket directories.
import { spawn } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  alive, consoleLogDir, consoleLogPath, guestRamPath, keptLogPath, reapStaleConsoleLogs, reapStaleGuestRam, reapStaleQemu, reapStaleRunDirs, runDirPrefix, spawnArgs,
} from '../../harness/qemu/leftovers.js';
import { findOnPath } from '../../harness/qemu/images.js';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ptlab-stale-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

/** A pid no process has (searched downwards from the top of the default pid range). */
function deadPid(): number {
  for (let p = 4_000_000; ; p--) if (!alive(p)) return p;
}

const until = async (cond: () => boolean, ms: number): Promise<boolean> => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) if (cond()) return true;
  return cond();
};

describe('names', () => {
  test('a guest-RAM file and a socket directory are named after the controlling process', () => {
    expect([guestRamPath('/dev/shm', 4242), runDirPrefix('/tmp', 4242)]).toEqual([expect.stringMatching(/^\/dev\/shm\/ptlab-4242-[0-9a-f]{16}$/), '/tmp/ptlab-qemu-4242-']);
  });
});

describe('files and directories', () => {
  test('guest-RAM files of dead controllers are removed; live ones and other files stay', async () => {
    for (const n of ['ptlab-111-ab12', 'ptlab-222-cd34', 'ptlab-notapid', 'other-111-ab12']) await writeFile(join(dir, n), '');
    const removed = await reapStaleGuestRam(dir, (pid) => pid === 222);
    expect([removed, (await readdir(dir)).sort()]).toEqual([['ptlab-111-ab12'], ['other-111-ab12', 'ptlab-222-cd34', 'ptlab-notapid']]);
  });

  test('socket directories of dead controllers are removed with their contents', async () => {
    for (const n of ['ptlab-qemu-111-xYz', 'ptlab-qemu-222-aBc', 'ptlab-qemu-old']) { await mkdir(join(dir, n)); await writeFile(join(dir, n, 'qmp.sock'), ''); }
    const removed = await reapStaleRunDirs(dir, (pid) => pid === 222);
    expect([removed, (await readdir(dir)).sort()]).toEqual([['ptlab-qemu-111-xYz'], ['ptlab-qemu-222-aBc', 'ptlab-qemu-old']]);
  });

  test('console logs of dead controllers are removed; a live one\'s and a kept one stay', async () => {
    const logs = await consoleLogDir(dir);
    const dead = consoleLogPath(logs, 111), live = consoleLogPath(logs, 222);
    for (const f of [dead, live, keptLogPath(consoleLogPath(logs, 111))]) await writeFile(f, '');
    const removed = await reapStaleConsoleLogs(logs, (pid) => pid === 222);
    expect([removed.length, (await readdir(logs)).map((n) => n.replace(/-\d{4}-.*$/, '')).sort()]).toEqual([1, ['console-222', 'console-kept']]);
  });

  test.for([
    { what: 'a symbolic link to another directory', make: async (p: string) => { await mkdir(`${p}-elsewhere`, { mode: 0o700 }); await symlink(`${p}-elsewhere`, p); } },
    { what: 'a directory open to others (0777)', make: async (p: string) => { await mkdir(p); await chmod(p, 0o777); } },
    { what: 'a file', make: (p: string) => writeFile(p, '') },
    // Root can make one another user owns (what a user of a shared $TMPDIR could have made first).
    ...(process.getuid?.() === 0 ? [{ what: 'a directory of another user', make: async (p: string) => { await mkdir(p, { mode: 0o700 }); await chown(p, 65534, 65534); } }] : []),
  ])('the console-log directory refused when it is $what', async ({ make }) => {
    const path = join(dir, `ptlab-logs-${process.getuid?.() ?? 0}`);
    await make(path);
    await expect(consoleLogDir(dir)).rejects.toMatchObject({ code: 'bad_config', message: expect.stringMatching(/where ptlab keeps QEMU's console logs/) });
  });

  test('the console-log directory is made private, and used again as it is', async () => {
    const a = await consoleLogDir(dir), b = await consoleLogDir(dir);
    expect([a === b, (await stat(a)).mode & 0o777]).toEqual([true, 0o700]);
  });

  test('the real liveness check keeps the file of this very process', async () => {
    await writeFile(join(dir, `ptlab-${process.pid}-00ff`), '');
    expect(await reapStaleGuestRam(dir)).toEqual([]);
  });
});

describe('processes', () => {
  test('a guest whose controller is dead is killed; one whose controller lives is not', async () => {
    const dead = deadPid();
    const orphan = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', `mem-path=/dev/shm/ptlab-${dead}-ab12,share=on`], { stdio: 'ignore' });
    const owned = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', `mem-path=/dev/shm/ptlab-${process.pid}-cd34`], { stdio: 'ignore' });
    try {
      await until(() => orphan.pid !== undefined && owned.pid !== undefined, 2000);
      const killed = await reapStaleQemu();
      expect([killed.includes(orphan.pid!), killed.includes(owned.pid!), await until(() => orphan.exitCode !== null || orphan.signalCode !== null, 2000), owned.exitCode])
        .toEqual([true, false, true, null]);
    } finally {
      orphan.kill('SIGKILL');
      owned.kill('SIGKILL');
    }
  });

  test.runIf(process.platform === 'linux')('a child started through setpriv --pdeathsig dies when its controller is killed with SIGKILL', async () => {
    const setpriv = await findOnPath('setpriv');
    expect(setpriv, 'util-linux setpriv (Debian: always installed)').toBeDefined();
    const { file, args } = spawnArgs('sleep', ['60'], setpriv);
    // The controller: starts the child, prints its pid, and waits to be killed.
    const code = `const c = require('node:child_process').spawn(${JSON.stringify(file)}, ${JSON.stringify(args)}, { stdio: 'ignore' }); console.log(c.pid); setInterval(() => {}, 1000);`;
    const controller = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    const child = Number(await new Promise<string>((resolve) => controller.stdout.once('data', (b: Buffer) => resolve(b.toString()))));
    expect(await until(() => alive(child), 2000)).toBe(true);
    controller.kill('SIGKILL');
    expect(await until(() => !alive(child), 3000)).toBe(true);
  });
});
