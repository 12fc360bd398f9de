// What a controller killed with SIGKILL leaves behind, and how the next launch clears it. Each
// launch names its guest-RAM file (`/dev/shm/ptlab-<pid>-<random>`, also in QEMU's command line as
// `mem-path=`) and its socket directory (`$TMPDIR/ptlab-qemu-<pid>-XXXXXX`) after the controlling
// process, and so is its console log (`$TMPDIR/ptlab-logs-<uid>/console-<pid>-….log`, in a
// directory of this user's that nobody else may enter). QEMU itself is started with a parent-death signal (spawnArgs: `setpriv --pdeathsig`), so
// it dies with its controller; should it not (no setpriv), the next launch stops every QEMU whose
// controller is gone, then removes the files and directories of dead controllers.
import { lstat, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import { randomBytes } from 'node:crypto';

const RAM_NAME = /^ptlab-(\d+)-[0-9a-f]+$/;
const RUN_DIR_NAME = /^ptlab-qemu-(\d+)-/;
/** A console log a VM of a live controller writes (a kept one is renamed `console-kept-…`). */
const LOG_NAME = /^console-(\d+)-.+\.log$/;
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

/**
 * The directory of this user's console logs: `$TMPDIR/ptlab-logs-<uid>`, made 0700 if missing, and
 * refused (PtError 'bad_config') unless it is a real directory (not a symbolic link) of this user
 * that nobody else may enter: in a shared $TMPDIR another user could otherwise make it first, or
 * point it elsewhere, and swap the files QEMU opens.
 */
export async function consoleLogDir(dir = tmpdir()): Promise<string> {
  const uid = process.getuid?.() ?? 0;
  const path = join(dir, `ptlab-logs-${uid}`);
  await mkdir(path, { mode: 0o700 }).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'EEXIST') throw e; });
  const st = await lstat(path);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) {
    const what = st.isSymbolicLink() ? 'a symbolic link' : !st.isDirectory() ? 'not a directory' : st.uid !== uid ? `owned by uid ${st.uid}` : `open to others (mode ${(st.mode & 0o777).toString(8)})`;
    throw new PtError('bad_config', `${path}, where ptlab keeps QEMU's console logs, is ${what}: remove it (it is made again, private)`);
  }
  return path;
}

/** A new console log path of this process in `dir` (console-<pid>-<time>-<random>.log). */
export function consoleLogPath(dir: string, pid = process.pid): string {
  return join(dir, `console-${pid}-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}.log`);
}

/** The name a console log kept for diagnosis takes: no pid, so the next launch does not reap it. */
export function keptLogPath(log: string): string {
  return join(dirname(log), basename(log).replace(LOG_NAME, (_m: string, pid: string) => `console-kept-${basename(log).slice(`console-${pid}-`.length)}`));
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

/** Removes console logs in `dir` whose controller is gone (it was killed before it removed them); returns their names. */
export async function reapStaleConsoleLogs(dir: string, isAlive: (pid: number) => boolean = alive): Promise<string[]> {
  return removeOrphans(dir, LOG_NAME, isAlive);
}

/** Everything a dead controller left: its QEMU processes first (they hold the files), then files and directories. */
export async function reapLeftovers(): Promise<void> {
  await reapStaleQemu();
  await reapStaleGuestRam();
  await reapStaleRunDirs();
  await reapStaleConsoleLogs(await consoleLogDir());
}

/**
 * The command that starts `binary` so that it dies with this process: through util-linux's
 * `setpriv --pdeathsig SIGKILL` (PR_SET_PDEATHSIG survives the exec) when `setpriv` is given.
 */
export function spawnArgs(binary: string, argv: readonly string[], setpriv: string | undefined): { file: string; args: string[] } {
  return setpriv === undefined ? { file: binary, args: [...argv] } : { file: setpriv, args: ['--pdeathsig', 'SIGKILL', '--', binary, ...argv] };
}
