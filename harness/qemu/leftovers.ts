// What a controller killed with SIGKILL leaves behind, and how the next launch clears it. Each
// launch names its guest-RAM file (`/dev/shm/ptlab-<pid>-<random>`, also in QEMU's command line as
// `mem-path=`) and its socket directory (`$TMPDIR/ptlab-qemu-<pid>-XXXXXX`) after the controlling
// process. QEMU itself is started with a parent-death signal (spawnArgs: `setpriv --pdeathsig`), so
// it dies with its controller; should it not (no setpriv), the next launch stops every QEMU whose
// controller is gone, then removes the files and directories of dead controllers.
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

const RAM_NAME = /^ptlab-(\d+)-[0-9a-f]+$/;
const RUN_DIR_NAME = /^ptlab-qemu-(\d+)-/;
/** A guest-RAM path in a QEMU command line. */
const RAM_IN_ARGV = /mem-path=[^,\0]*\/ptlab-(\d+)-[0-9a-f]+/;

/** The memory-backend file name for a new VM of this process, under `dir`. */
export function guestRamPath(dir = '/dev/shm', pid = process.pid): string {
  return join(dir, `ptlab-${pid}-${randomBytes(8).toString('hex')}`);
}

/** The mkdtemp prefix of a new VM's socket directory (owner's pid in the name). */
export function runDirPrefix(dir = tmpdir(), pid = process.pid): string {
  return join(dir, `ptlab-qemu-${pid}-`);
}

/** Whether process `pid` exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

/** Removes guest-RAM files in `dir` whose owning process is gone; returns their names. */
export async function reapStaleGuestRam(dir = '/dev/shm', isAlive: (pid: number) => boolean = alive): Promise<string[]> {
  return removeOrphans(dir, RAM_NAME, isAlive);
}

/** Removes socket directories in `dir` whose owning process is gone; returns their names. */
export async function reapStaleRunDirs(dir = tmpdir(), isAlive: (pid: number) => boolean = alive): Promise<string[]> {
  return removeOrphans(dir, RUN_DIR_NAME, isAlive);
}

async function removeOrphans(dir: string, name: RegExp, isAlive: (pid: number) => boolean): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const stale = names.filter((n) => {
    const m = name.exec(n);
    return m !== null && !isAlive(Number(m[1]));
  });
  await Promise.all(stale.map((n) => rm(join(dir, n), { recursive: true, force: true })));
  return stale;
}

/**
 * Kills (SIGKILL) every process under `procDir` running a ptlab guest whose controller is gone
 * (its guest-RAM path names a dead pid); returns their pids. `kill` is injectable for tests.
 */
export async function reapStaleQemu(procDir = '/proc', isAlive: (pid: number) => boolean = alive,
  kill: (pid: number) => void = (pid) => process.kill(pid, 'SIGKILL')): Promise<number[]> {
  const pids = (await readdir(procDir).catch(() => [] as string[])).filter((n) => /^\d+$/.test(n));
  const killed: number[] = [];
  for (const p of pids) {
    const cmdline = await readFile(join(procDir, p, 'cmdline'), 'latin1').catch(() => '');
    const m = RAM_IN_ARGV.exec(cmdline);
    if (m === null || isAlive(Number(m[1]))) continue;
    try { kill(Number(p)); killed.push(Number(p)); } catch { /* gone meanwhile */ }
  }
  return killed;
}

/** Everything a dead controller left: its QEMU processes first (they hold the files), then files and directories. */
export async function reapLeftovers(): Promise<void> {
  await reapStaleQemu();
  await reapStaleGuestRam();
  await reapStaleRunDirs();
}

/**
 * The command that starts `binary` so that it dies with this process: through util-linux's
 * `setpriv --pdeathsig SIGKILL` (PR_SET_PDEATHSIG survives the exec) when `setpriv` is given.
 */
export function spawnArgs(binary: string, argv: readonly string[], setpriv: string | undefined): { file: string; args: string[] } {
  return setpriv === undefined ? { file: binary, args: [...argv] } : { file: setpriv, args: ['--pdeathsig', 'SIGKILL', '--', binary, ...argv] };
}
