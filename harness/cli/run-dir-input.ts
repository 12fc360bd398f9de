// A run directory given where `dump` or `flow` wants a trace: its trace.pt, its code image at the
// base image.json names, and its loss ledger — so `ptlab flow runs/a/topa-grow/skylake` decodes a
// run as ptlab's own flow check did, with nothing to copy out of image.json by hand.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import { readRunFile } from '../rundir/read-run-file.js';
import { RUN_FILES } from '../rundir/run-files.js';
import type { TraceTiming } from '../rundir/interop.js';

/** What a run directory holds for a decoder. */
export interface RunDirInput {
  readonly trace: string;
  readonly image: { readonly path: string; readonly base: bigint };
  /** Its losses.json, when it has one. */
  readonly losses?: string;
  /** image.json's timing parameters (MTCFreq, P1, CPUID.15H), when it states them. */
  readonly timing?: TraceTiming;
}

/** True when `path` names a directory (not `-`, a file, a FIFO or nothing). */
export async function isDirectory(path: string): Promise<boolean> {
  if (path === '-') return false;
  return (await stat(path).catch(() => undefined))?.isDirectory() === true;
}

/**
 * The decoder's inputs of the run directory `dir`; PtError('bad_config') when the directory is not
 * one a decoder can read (no trace.pt: a skipped run, or not a run directory at all; no image.json).
 */
export async function runDirInput(dir: string): Promise<RunDirInput> {
  const has = async (f: string): Promise<boolean> => (await stat(join(dir, f)).catch(() => undefined))?.isFile() === true;
  if (!(await has(RUN_FILES.trace))) {
    throw new PtError('bad_config', `${dir}: a directory without ${RUN_FILES.trace}: give a trace file, or a run directory of a run that traced (a skipped run has none)`);
  }
  let base: unknown, timing: unknown;
  try {
    ({ base, timing } = JSON.parse((await readRunFile(dir, RUN_FILES.imageJson)).toString('utf8')) as { base?: unknown; timing?: unknown });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new PtError('bad_config', `${dir}: a run directory without ${RUN_FILES.imageJson}: give --image FILE@BASE`);
    if (e instanceof PtError) throw e;
    throw new PtError('bad_config', `${join(dir, RUN_FILES.imageJson)}: not JSON (${(e as Error).message})`);
  }
  if (typeof base !== 'string' || !/^0x[0-9a-f]{1,16}$/.test(base)) throw new PtError('bad_config', `${join(dir, RUN_FILES.imageJson)}: its "base" is not a hex address`);
  return {
    trace: join(dir, RUN_FILES.trace), image: { path: join(dir, RUN_FILES.image), base: BigInt(base) },
    ...((await has(RUN_FILES.losses)) ? { losses: join(dir, RUN_FILES.losses) } : {}),
    ...(isTiming(timing) ? { timing } : {}),
  };
}

/** image.json's "timing" as ptlab writes it (harness/rundir/interop.ts TraceTiming); anything else is left out. */
function isTiming(t: unknown): t is TraceTiming {
  if (typeof t !== 'object' || t === null) return false;
  const { mtcFreq, nomFreq, cpuid15 } = t as Record<string, unknown>;
  const count = (v: unknown): boolean => v === null || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0);
  const ratio = cpuid15 === null || (typeof cpuid15 === 'object' && cpuid15 !== undefined &&
    count((cpuid15 as Record<string, unknown>).eax) && count((cpuid15 as Record<string, unknown>).ebx));
  return count(mtcFreq) && count(nomFreq) && ratio;
}
