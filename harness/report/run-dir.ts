// The run directory (docs/design.md "The run directory", a contract other tools
// read): result.json, transcript.jsonl, trace.pt, losses.json, image.bin,
// image.json, truth.jsonl (sim). A run directory is written into a
// staging directory and renamed into place, so nothing is ever half-written.
import { mkdir, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { LossLedger } from '../../driver/collect/ledger.js';
import type { CpuIdentity, TraceTiming } from './interop.js';
import { resultJsonText, type ResultJson } from './result.js';
import { readBoundedFile } from '../files/read-input.js';

/** image.json: where the workload's code sits, and the CPU's leaf 14H. */
export interface ImageJson {
  readonly base: string;
  readonly entry: string;
  readonly bytes: number;
  /** Leaf 0x14 sub-leaves as read by the probe: {subleaf, eax, ebx, ecx, edx} in hex. */
  readonly cpuid14: readonly { readonly subleaf: number; readonly eax: string; readonly ebx: string; readonly ecx: string; readonly edx: string }[];
  readonly profile: string;
  /** The CPU as CPUID names it (libipt's --cpu: its errata depend on it). */
  readonly cpu: CpuIdentity;
  /** The timing parameters of the trace (libipt's --mtc-freq, --nom-freq, --cpuid-0x15.*). */
  readonly timing: TraceTiming;
  /** The errata of that CPU by ptlab's table (driver/hw/errata.ts; docs/sdm/errata.md), sorted. */
  readonly errata: readonly string[];
  /** Where the CPU's CPUID contradicts the errata table (the probe's warnings); usually empty. */
  readonly probeWarnings: readonly string[];
}

/** Everything of a run but its verdict. */
export interface RunArtifacts {
  readonly transcript: string;
  readonly trace: Uint8Array;
  readonly losses: LossLedger;
  readonly image: Uint8Array;
  readonly imageJson: ImageJson;
  /** truth.jsonl text or its bytes (sim only). */
  readonly truth?: string | Uint8Array;
}

/** The file names of the contract. */
export const RUN_FILES = {
  result: 'result.json', transcript: 'transcript.jsonl', trace: 'trace.pt', losses: 'losses.json',
  image: 'image.bin', imageJson: 'image.json', truth: 'truth.jsonl',
} as const;

/**
 * The most bytes each file of a run directory holds, far above what a run writes (a stress run's
 * transcript is tens of MB, its trace a few): a larger file, a device or a FIFO there is not ptlab's.
 */
export const RUN_FILE_MAX_BYTES: Readonly<Record<RunFile, number>> = {
  'result.json': 16 << 20, 'transcript.jsonl': 256 << 20, 'trace.pt': 256 << 20, 'losses.json': 16 << 20,
  'image.bin': 256 << 20, 'image.json': 1 << 20, 'truth.jsonl': 256 << 20,
};

/** A file's name in a run directory. */
export type RunFile = (typeof RUN_FILES)[keyof typeof RUN_FILES];

/**
 * `dir/file` of a run directory given as input (diff, replay, report): a regular file within its
 * bound (RUN_FILE_MAX_BYTES), read without waiting on a FIFO. ENOENT as it is; PtError('bad_config') otherwise.
 */
export function readRunFile(dir: string, file: RunFile): Promise<Buffer> {
  return readBoundedFile(join(dir, file), RUN_FILE_MAX_BYTES[file], `a run directory's ${file}`);
}

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

/** Writes the artifacts of a run into `dir`. */
export async function writeArtifacts(dir: string, a: RunArtifacts): Promise<void> {
  await writeFile(join(dir, RUN_FILES.transcript), a.transcript);
  await writeFile(join(dir, RUN_FILES.trace), a.trace);
  await writeFile(join(dir, RUN_FILES.losses), `${JSON.stringify(a.losses)}\n`);
  await writeFile(join(dir, RUN_FILES.image), a.image);
  await writeFile(join(dir, RUN_FILES.imageJson), `${JSON.stringify(a.imageJson)}\n`);
  if (a.truth !== undefined) await writeFile(join(dir, RUN_FILES.truth), a.truth);
}

/** Writes result.json into `dir` (the suite's junit.xml, at the root of --out, has the run too). */
export async function writeVerdict(dir: string, r: ResultJson): Promise<void> {
  await writeFile(join(dir, RUN_FILES.result), resultJsonText(r));
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
