// Guest-RAM files whose owner died. Each launch names its memory-backend file
// after the controlling process (`ptlab-<pid>-<random>`); a controller killed
// with SIGKILL cannot remove its file, so the next launch removes every such
// file whose process no longer exists.
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

const NAME = /^ptlab-(\d+)-[0-9a-f]+$/;

/** The memory-backend file name for a new VM of this process, under `dir`. */
export function guestRamPath(dir = '/dev/shm', pid = process.pid): string {
  return join(dir, `ptlab-${pid}-${randomBytes(8).toString('hex')}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

/** Removes guest-RAM files in `dir` whose owning process is gone; returns their names. */
export async function reapStaleGuestRam(dir = '/dev/shm', isAlive: (pid: number) => boolean = alive): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const stale = names.filter((n) => {
    const m = NAME.exec(n);
    return m !== null && !isAlive(Number(m[1]));
  });
  await Promise.all(stale.map((n) => rm(join(dir, n), { force: true })));
  return stale;
}
