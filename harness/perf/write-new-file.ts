// Writing an export to a path that holds nothing yet: a file ptlab did not write is never
// overwritten, and a reader never sees half a file. The bytes go to a private temporary name in
// the same directory (same file system), then take the final name with link(2), which, unlike
// rename(2), fails when the name was taken meanwhile (EEXIST); the temporary name is then removed.
import { lstat, link, open, realpath, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import { pseudoFsOf } from '../report/out-dir.js';


/** `path` names something already (a file, a directory, a link, even a dangling one): it is left alone. */
export class OutputExistsError extends PtError {
  override readonly name = 'OutputExistsError';
  constructor(readonly path: string) {
    super('bad_config', `${path} exists: ptlab writes a new file only and never replaces one (remove it or give another -o)`);
  }
}

/** The real directory `path` will live in; PtError('bad_config') when there is none or it lies on a kernel file system. */
async function targetDir(path: string): Promise<string> {
  const dir = dirname(resolve(path));
  let real: string;
  try {
    real = await realpath(dir);
  } catch {
    throw new PtError('bad_config', `${path}: no directory ${dir} to write it in`);
  }
  // A kernel file system is no place for a file of ptlab's (as for `run --out`).
  if (pseudoFsOf(real) !== undefined) throw new PtError('bad_config', `${path} lies under ${real}, a kernel file system: give a path on a disk`);
  return real;
}

/** Throws OutputExistsError when `path` names anything. */
export async function assertAbsent(path: string): Promise<void> {
  if (await lstat(path).then(() => true, () => false)) throw new OutputExistsError(path);
}

/** Writes `data` as the new file `path`, mode 0600, whole or not at all; OutputExistsError when the name is taken. */
export async function writeNewFile(path: string, data: Uint8Array): Promise<void> {
  await assertAbsent(path);
  const dir = await targetDir(path);
  const final = join(dir, basename(path));
  const tmp = join(dir, `.${basename(path)}.partial-${process.pid}-${Date.now()}`);
  try {
    const fh = await open(tmp, 'wx', 0o600);
    try {
      await fh.chmod(0o600); // the umask may have taken bits away; never added any
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await link(tmp, final);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new OutputExistsError(path);
      // A file system without hard links: the name was free a moment ago; rename is the best left.
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw e;
      await assertAbsent(final);
      await rename(tmp, final);
    }
  } finally {
    await rm(tmp, { force: true }).catch(() => undefined);
  }
}
