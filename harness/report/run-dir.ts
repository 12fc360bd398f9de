// The run directory (DESIGN.md "The run directory", a contract other tools
// read): result.json, transcript.jsonl, trace.pt, losses.json, image.bin,
// image.json, truth.jsonl (sim), junit.xml. A run directory is written into a
// staging directory and renamed into place, so nothing is ever half-written.
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { LossLedger } from '../../driver/collect/ledger.js';
import { junitXml } from './junit.js';
import { resultJsonText, type ResultJson } from './result.js';

/** image.json: where the workload's code sits, and the CPU's leaf 14H. */
export interface ImageJson {
  readonly base: string;
  readonly entry: string;
  readonly bytes: number;
  /** Leaf 0x14 sub-leaves as read by the probe: {subleaf, eax, ebx, ecx, edx} in hex. */
  readonly cpuid14: readonly { readonly subleaf: number; readonly eax: string; readonly ebx: string; readonly ecx: string; readonly edx: string }[];
  readonly profile: string;
}

/** Everything of a run but its verdict. */
export interface RunArtifacts {
  readonly transcript: string;
  readonly trace: Uint8Array;
  readonly losses: LossLedger;
  readonly image: Uint8Array;
  readonly imageJson: ImageJson;
  /** truth.jsonl text (sim only). */
  readonly truth?: string;
}

/** The file names of the contract. */
export const RUN_FILES = {
  result: 'result.json', transcript: 'transcript.jsonl', trace: 'trace.pt', losses: 'losses.json',
  image: 'image.bin', imageJson: 'image.json', truth: 'truth.jsonl', junit: 'junit.xml',
} as const;

/** A staging directory next to `dir` (same file system, so the final rename is atomic). */
export async function stage(dir: string): Promise<string> {
  const tmp = join(dirname(dir), `.${dir.split(/[\\/]/).pop() ?? 'run'}.partial-${process.pid}-${Date.now()}`);
  await mkdir(tmp, { recursive: true });
  return tmp;
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

/** Writes result.json and junit.xml into `dir`. */
export async function writeVerdict(dir: string, r: ResultJson): Promise<void> {
  await writeFile(join(dir, RUN_FILES.result), resultJsonText(r));
  await writeFile(join(dir, RUN_FILES.junit), junitXml([r]));
}

/** Moves the staged `tmp` to `dir` (replacing an older run there). */
export async function commit(tmp: string, dir: string): Promise<void> {
  await mkdir(dirname(dir), { recursive: true });
  await rm(dir, { recursive: true, force: true });
  await rename(tmp, dir);
}

/** Removes a staging directory after a failure. */
export async function discard(tmp: string): Promise<void> {
  await rm(tmp, { recursive: true, force: true });
}
