// Which files ptlab may replace (docs/design.md "Where run directories go"): ptlab never overwrites
// or deletes a file it did not write. A path that holds one of ptlab's file names is replaced only
// when it is a regular file holding what ptlab writes under that name; a file of anyone else, a
// device node, a directory or a symbolic link there is refused, and nothing is written. What ptlab
// does write goes into a new file beside the old one, renamed over it, so a hard link elsewhere
// (ptlab merge links run files from the shards) keeps its bytes.
import { lstat, open, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { PtError } from '../../driver/base/errors.js';

/** A file name ptlab writes, and how a reader tells ptlab's file by its first bytes. */
const SIGNATURES: Readonly<Record<string, (head: string) => boolean>> = {
  'junit.xml': (h) => h.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="ptlab'),
  'results.jsonl': (h) => h === '' || /^\{"scenario":"[^"]*","target":"[^"]*","profile":"[^"]*","seed":\d+,"verdict":"/.test(h),
  'report.html': (h) => h.startsWith('<!doctype html>\n<html lang="en"><head><meta charset="utf-8">') && h.includes('<title>ptlab report: '),
  'shard.json': (h) => /^\{\s*"format":\s*"ptlab-shard\//.test(h),
  'result.json': (h) => /^\{\n {2}"scenario": "[^"]*",\n {2}"target": "[^"]*",\n {2}"profile": "[^"]*",\n {2}"seed": \d+,\n {2}"verdict": "/.test(h),
  'replay.json': (h) => /^\{\n {2}"run": "/.test(h),
};

/** Bytes of a file's head its signature looks at. */
const HEAD_BYTES = 512;

/** A path holds something ptlab did not write (or cannot replace): nothing was written. */
export class ForeignFileError extends PtError {
  override readonly name = 'ForeignFileError';
  constructor(readonly path: string, readonly why: string) {
    super('bad_config', `${path} ${why}: ptlab replaces only files it wrote; move it away, or choose another place`);
  }
}

/** What is at `path` now: nothing, a regular file (not a symbolic link), or something else. */
async function kindAt(path: string): Promise<'none' | 'file' | string> {
  try {
    const st = await lstat(path);
    if (st.isFile()) return 'file';
    return st.isDirectory() ? 'a directory' : st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file (a device, a socket or a FIFO)';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'none';
    throw e;
  }
}

/** The first HEAD_BYTES of the regular file at `path`, as text. */
async function headOf(path: string): Promise<string> {
  const f = await open(path, 'r');
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await f.read(buf, 0, HEAD_BYTES, 0);
    return buf.subarray(0, bytesRead).toString('latin1');
  } finally {
    await f.close();
  }
}

/** True when `path` is a regular file holding what ptlab writes under the name `as` (default: its own name). */
export async function isPtlabFile(path: string, as = basename(path)): Promise<boolean> {
  const sign = SIGNATURES[as];
  if (sign === undefined || (await kindAt(path)) !== 'file') return false;
  return sign(await headOf(path));
}

/**
 * Throws ForeignFileError unless ptlab may write `path` as the file `as` (default: its own name):
 * nothing is there, or ptlab's own file of that kind. A name ptlab has no signature for (a run
 * directory's trace.pt) may only be written where nothing is.
 */
export async function assertReplaceable(path: string, as = basename(path)): Promise<void> {
  const kind = await kindAt(path);
  if (kind === 'none') return;
  if (kind !== 'file') throw new ForeignFileError(path, `is ${kind}`);
  if (!(await isPtlabFile(path, as))) throw new ForeignFileError(path, `is not a ${as} that ptlab wrote`);
}

/**
 * Writes `data` to `path` whole or not at all, never into an existing file in place: into a new file
 * beside it, renamed over it. With `check`, refuses (ForeignFileError) what ptlab may not replace there.
 */
export async function replaceFile(path: string, data: string | Uint8Array, o: { check?: boolean; as?: string } = {}): Promise<void> {
  if (o.check) await assertReplaceable(path, o.as);
  const tmp = join(dirname(path), `.${basename(path)}.partial-${process.pid}-${Date.now()}`);
  try {
    await writeFile(tmp, data, { flag: 'wx' });
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
}
