// Puts one shard's run directory into the merged suite (docs/sharding.md "Run directories"): the
// files of the run-directory contract (RUN_FILES) are hard-linked when the shard and the suite
// share a file system (no bytes copied, and ptlab never rewrites a run file in place: a rerun
// stages new files and renames them over), copied otherwise or with --copy. The run is staged and
// committed as `ptlab run` commits one, so --force replaces only ptlab's files in an earlier run
// there; other files in the shard's run directory are not merged (they are returned).
import { copyFile, link, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { commit, discard, stage } from '../rundir/stage.js';
import { RUN_FILES } from '../rundir/run-files.js';

/** How the files arrived, and the files of the shard's run directory that are not ptlab's. */
export interface Placed {
  linked: number;
  copied: number;
  readonly notMerged: string[];
}

/** errno codes of a hard link that cannot be made here (another file system, no link support): copy instead. */
const NO_LINK = new Set(['EXDEV', 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK', 'ENOSYS']);

/** Hard-links (or, `copy`, copies) the run directory `src` to `dst`; adds to `tally`. */
export async function placeRun(src: string, dst: string, copy: boolean, tally: Placed): Promise<void> {
  const ours = new Set<string>(Object.values(RUN_FILES));
  const files = await readdir(src);
  for (const f of files) if (!ours.has(f)) tally.notMerged.push(join(src, f));
  const tmp = await stage(dst);
  try {
    for (const f of files.filter((x) => ours.has(x))) {
      if (!copy) {
        const made = await link(join(src, f), join(tmp, f)).then(() => true, (e: NodeJS.ErrnoException) => {
          if (NO_LINK.has(e.code ?? '')) return false;
          throw e;
        });
        if (made) { tally.linked++; continue; }
      }
      await copyFile(join(src, f), join(tmp, f));
      tally.copied++;
    }
    await commit(tmp, dst);
  } catch (e) {
    await discard(tmp);
    throw e;
  }
}
