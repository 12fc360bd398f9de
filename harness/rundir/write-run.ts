// The files of one run, written into its staging directory (stage.ts): everything but the verdict
// once the run's trace is collected, and result.json last, when the verdict is known.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LossLedger } from '../../driver/collect/ledger.js';
import type { ImageJson } from './image-json.js';
import { resultJsonText, type ResultJson } from './result.js';
import { RUN_FILES } from './run-files.js';

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
