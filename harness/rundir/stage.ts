// A run directory is written into a staging directory next to its place and renamed into place once
// its files are complete, so nothing is ever half-written (docs/design.md "Where run directories
// go"): `stage` makes the staging directory, `commit` moves it into place, `discard` removes it.
import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RUN_FILES } from './run-files.js';

/** Files earlier ptlab versions wrote into a run directory (replaced with it under --force). */
const EARLIER_RUN_FILES = ['junit.xml'];

/** How often `stage` starts again after a parent vanished under it. */
const STAGE_ATTEMPTS = 1000;

/**
 * A staging directory next to `dir` (same file system, so the final rename is atomic). Another
 * lane of the suite may create and remove the same empty parents at once (a seed directory whose
 * runs kept nothing), and Node's recursive mkdir then fails half-way (ENOENT, or ENOTDIR when a
 * directory it found existing is gone by the time it looks at it). So each missing level is made
 * on its own, top down, and a level that vanished before the next one was made in it starts the
 * walk again. Once `tmp` exists its parents are not empty, so nobody removes them.
 */
export async function stage(dir: string): Promise<string> {
  const tmp = join(dirname(dir), `.${dir.split(/[\\/]/).pop() ?? 'run'}.partial-${process.pid}-${Date.now()}`);
  const levels: string[] = [];
  for (let d = tmp; dirname(d) !== d; d = dirname(d)) levels.unshift(d);
  for (let attempt = 1; ; attempt++) {
    try {
      for (const d of levels) await mkdir(d).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'EEXIST') throw e; });
      return tmp;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= STAGE_ATTEMPTS) throw e;
    }
  }
}

/**
 * Moves the staged `tmp` to `dir`. An older run there (`--force`) loses only the files a run
 * directory consists of (RUN_FILES); anything else in it was not written by ptlab and stays, with
 * the new run's files moved in beside it.
 */
export async function commit(tmp: string, dir: string): Promise<void> {
  await mkdir(dirname(dir), { recursive: true });
  const old = await readdir(dir).catch((e: NodeJS.ErrnoException) => { if (e.code === 'ENOENT') return undefined; throw e; });
  if (old !== undefined) {
    const ours: string[] = [...Object.values(RUN_FILES), ...EARLIER_RUN_FILES];
    for (const f of ours) if (old.includes(f)) await rm(join(dir, f), { force: true });
    const foreign = old.filter((f) => !ours.includes(f));
    if (foreign.length > 0) {
      for (const f of await readdir(tmp)) await rename(join(tmp, f), join(dir, f));
      await rmdir(tmp);
      return;
    }
    await rmdir(dir);
  }
  await rename(tmp, dir);
}

/** Removes a staging directory after a failure. */
export async function discard(tmp: string): Promise<void> {
  await rm(tmp, { recursive: true, force: true });
}
