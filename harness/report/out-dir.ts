// The --out directory of a suite, a merge, a sequence run or a replay (docs/design.md "Where run
// directories go"): on a real file system, writable, and new or empty — or, with --force, holding
// only what an earlier ptlab run wrote there, checked before anything runs. ptlab never deletes or
// overwrites a file it did not write.
import { access, constants, lstat, mkdir, readdir, realpath, rm, rmdir, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { systemWords } from '../text/strerror.js';
import { PtError } from '../../driver/base/errors.js';
import { ForeignFileError, isPtlabFile } from './owned-files.js';
import { RUN_FILES } from '../rundir/run-files.js';

/** Kernel file systems: writable-looking paths where a run directory cannot live. */
const PSEUDO_FS = ['/proc', '/sys', '/dev'];

/** The files a suite writes at the root of --out. */
const SUITE_FILES = ['junit.xml', 'results.jsonl', 'report.html', 'shard.json'] as const;

/** The real path of `p`, or of its nearest existing ancestor (with the rest appended). */
async function realpathOfNearest(p: string): Promise<string> {
  let rest = '';
  for (let d = resolve(p); ; d = dirname(d)) {
    try {
      return join(await realpath(d), rest);
    } catch {
      if (dirname(d) === d) return resolve(p);
      rest = join(basename(d), rest);
    }
  }
}

/** The kernel file system (`/proc`, `/sys`, `/dev`) the real path `real` lies under, if any. */
export function pseudoFsOf(real: string): string | undefined {
  return PSEUDO_FS.find((p) => real === p || real.startsWith(`${p}/`));
}

/** Throws PtError('bad_config') when `path` is, or would be, under a kernel file system. */
export async function refusePseudoFs(path: string, what: string): Promise<void> {
  const pseudo = pseudoFsOf(await realpathOfNearest(path));
  if (pseudo !== undefined) throw new PtError('bad_config', `${what} ${path} is under ${pseudo}, a kernel file system: give a path on a disk`);
}

/**
 * Creates `out` if needed and checks, before anything runs, that it is a writable directory of a
 * real file system and empty — or, with `force`, that whatever carries one of ptlab's names there
 * is ptlab's own (foreignFiles), so that an earlier run's files are replaced and nothing else is;
 * what a killed ptlab left half-written there goes first (removeStaleStaging). Returns the first
 * directory it created.
 */
export async function prepareOut(out: string, force = false): Promise<string | undefined> {
  await refusePseudoFs(out, '--out');
  let created: string | undefined;
  try {
    // A file (or a link to one) in the way is named as such, not as mkdir's EEXIST.
    const st = await stat(out).catch(() => undefined);
    if (st !== undefined && !st.isDirectory()) throw new PtError('bad_config', `--out ${out} is a file, not a directory: give a new or empty directory`);
    created = await mkdir(out, { recursive: true });
    await access(out, constants.W_OK);
  } catch (e) {
    if (e instanceof PtError) throw e;
    throw new PtError('bad_config', `cannot write run directories under --out ${out}: ${systemWords(e)}`, { cause: e });
  }
  const held = await readdir(out);
  if (held.length > 0 && !force) {
    throw new PtError('bad_config', `--out ${out} is not empty (${held.length} entr${held.length === 1 ? 'y' : 'ies'}); give a new or empty directory, or --force to replace the run directories of an earlier run there (ptlab never deletes a file it did not write)`);
  }
  if (held.length > 0) {
    await removeStaleStaging(out);
    const foreign = await foreignFiles(out);
    if (foreign.length > 0) {
      const list = foreign.slice(0, 3).map((f) => `${f.path} (${f.why})`).join(', ');
      throw new ForeignFileError(`--out ${out}`, `holds ${foreign.length} file${foreign.length === 1 ? '' : 's'} with ptlab's names that ptlab did not write — ${list}${foreign.length > 3 ? ', …' : ''} — so --force would overwrite them`);
    }
  }
  return created;
}

/** A staging entry of ptlab's (harness/rundir/stage.ts stage, owned-files.ts replaceFile): `.<name>.partial-<pid>-<ms>`. */
const STAGING = /^\..+\.partial-(\d+)-\d+$/;

/** True while process `pid` exists on this machine (signal 0 asks without sending anything). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes what a ptlab process killed mid-run (SIGKILL, a crash) left in `out`: its staging
 * directories and half-written files (`.<name>.partial-<pid>-<ms>`, at the root and in the run
 * directories), when process <pid> is gone. A live process's staging is left alone.
 */
export async function removeStaleStaging(out: string): Promise<string[]> {
  const removed: string[] = [];
  const visit = async (dir: string, depth: number): Promise<void> => {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const path = join(dir, name);
      const m = STAGING.exec(name);
      if (m && !alive(Number(m[1]))) {
        await rm(path, { recursive: true, force: true });
        removed.push(path);
      } else if (depth < 3 && !name.startsWith('.') && (await lstat(path).catch(() => undefined))?.isDirectory()) {
        await visit(path, depth + 1);
      }
    }
  };
  await visit(out, 0);
  return removed;
}

/** Removes the directories prepareOut created, from `out` up to `created`, while they are empty. */
export async function unprepareOut(out: string, created: string | undefined): Promise<void> {
  if (created !== undefined) await removeEmptyDirs(out, created);
}

/** Removes `from` and its parents up to and including `top`, while they are empty (rmdir never removes a file). */
export async function removeEmptyDirs(from: string, top: string): Promise<void> {
  const last = resolve(top);
  if (relative(last, resolve(from)).startsWith('..')) return;
  for (let d = resolve(from); ; d = dirname(d)) {
    if (!(await rmdir(d).then(() => true, () => false)) || d === last || dirname(d) === d) return;
  }
}

/** A file with one of ptlab's names that ptlab did not write, and why it is taken for foreign. */
export interface ForeignFile {
  readonly path: string;
  readonly why: string;
}

/** The entries of directory `d`, or none when it is not one. */
async function entriesOf(d: string): Promise<string[]> {
  return (await lstat(d)).isDirectory() ? readdir(d) : [];
}

/**
 * What --force would overwrite in `out` that ptlab did not write: a suite file at its root
 * (junit.xml, results.jsonl, report.html, shard.json) that is not ptlab's, and the run files of a
 * run directory (DIR/<scenario>/<profile>/, DIR/seed-<S>/<scenario>/<profile>/) whose result.json
 * is not a ptlab result. Anything that is not a regular file under such a name counts too.
 */
export async function foreignFiles(out: string): Promise<ForeignFile[]> {
  const found: ForeignFile[] = [];
  const check = async (path: string, as: string): Promise<void> => {
    const st = await lstat(path).catch(() => undefined);
    if (st === undefined) return;
    if (!st.isFile()) found.push({ path, why: st.isSymbolicLink() ? 'a symbolic link' : st.isDirectory() ? 'a directory' : 'not a regular file' });
    else if (!(await isPtlabFile(path, as))) found.push({ path, why: `not a ${as} ptlab wrote` });
  };
  for (const f of SUITE_FILES) await check(join(out, f), f);
  const runFiles: string[] = Object.values(RUN_FILES);
  const runDir = async (dir: string): Promise<void> => {
    const names = await entriesOf(dir).catch(() => []);
    const ours = names.filter((n) => runFiles.includes(n));
    if (ours.length === 0) return;
    if (ours.includes(RUN_FILES.result) && (await isPtlabFile(join(dir, RUN_FILES.result)))) return;
    for (const n of ours) found.push({ path: join(dir, n), why: `in a directory without a ptlab ${RUN_FILES.result}` });
  };
  // Entries starting with a dot are ptlab's staging (or nobody's run directory): never a place it writes.
  const profilesOf = async (scenarioDir: string): Promise<void> => {
    for (const p of await entriesOf(scenarioDir).catch(() => [])) if (!p.startsWith('.')) await runDir(join(scenarioDir, p));
  };
  for (const top of (await readdir(out)).filter((n) => !n.startsWith('.'))) {
    const d = join(out, top);
    if (/^seed-\d+$/.test(top)) for (const s of await entriesOf(d).catch(() => [])) await profilesOf(join(d, s));
    else await profilesOf(d);
  }
  return found;
}
