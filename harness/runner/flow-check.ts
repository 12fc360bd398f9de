// "ptlab flow on the exported files equals truth.jsonl" (issue 4 item 10):
// reads trace.pt, image.bin + image.json and losses.json back from a run
// directory and reconstructs the flow exactly as `ptlab flow trace.pt
// --image image.bin@BASE --losses losses.json --json` does. flowOfStream and compareFlowLines are
// the same decode and comparison on bytes in memory (`ptlab seq`'s `flow: truth`).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FlowDecoder, type FlowLoss } from '../../driver/decode/flow/flow-decoder.js';
import { ImageSet } from '../../driver/decode/flow/image.js';
import { flowJsonLine } from '../../driver/decode/flow/record.js';
import type { FlowMatch } from '../scenarios/context.js';
import { RUN_FILES } from '../report/run-dir.js';

/** A code image the flow decoder reads instructions from: its bytes at `base`. */
export interface FlowImage {
  readonly bytes: Uint8Array;
  readonly base: bigint;
}

/** The flow-json lines of `trace` over `images`, with the gaps of `lost` (the loss ledger), as `ptlab flow --json` prints them. */
export function flowOfStream(trace: Uint8Array, images: readonly FlowImage[], lost: readonly FlowLoss[]): string[] {
  const set = new ImageSet(images.map((i) => ({ bytes: i.bytes, base: i.base })));
  const out: string[] = [];
  try {
    new FlowDecoder(set, { ledger: lost }).decode(trace, (r) => out.push(flowJsonLine(r)));
  } finally {
    set.dispose();
  }
  return out;
}

/** The flow-json lines of the run directory `dir`. */
export async function flowOfRunDir(dir: string): Promise<string[]> {
  const trace = new Uint8Array(await readFile(join(dir, RUN_FILES.trace)));
  const image = new Uint8Array(await readFile(join(dir, RUN_FILES.image)));
  const meta = JSON.parse(await readFile(join(dir, RUN_FILES.imageJson), 'utf8')) as { base: string };
  const losses = JSON.parse(await readFile(join(dir, RUN_FILES.losses), 'utf8')) as { lost: FlowLoss[] };
  return flowOfStream(trace, [{ bytes: image, base: BigInt(meta.base) }], losses.lost);
}

const isGap = (l: string): boolean => l.startsWith('{"kind":"gap"');

/** Compares the flow of `dir` with its truth.jsonl as `mode` says: ok, and where they first differ. */
export async function compareFlowWithTruth(dir: string, mode: FlowMatch = 'equal'): Promise<{ ok: boolean; detail: string }> {
  const all = await flowOfRunDir(dir);
  const truth = (await readFile(join(dir, RUN_FILES.truth), 'utf8')).split('\n').filter((l) => l.length > 0);
  return compareFlowLines(all, truth, mode);
}

/** Compares reconstructed flow lines `all` with truth lines as `mode` says: ok, and where they first differ. */
export function compareFlowLines(all: readonly string[], truth: readonly string[], mode: FlowMatch = 'equal'): { ok: boolean; detail: string } {
  let flow = all, want = truth;
  if (mode === 'until-disable') {
    want = truth.slice(0, -1);
    flow = all.slice(0, want.length);
  } else if (mode !== 'equal') {
    const gaps = all.flatMap((l, i) => (isGap(l) ? [i] : []));
    if (gaps.length === 0) return { ok: false, detail: `expected a gap record in the flow, found none (${all.length} lines)` };
    flow = mode === 'prefix' ? all.slice(0, gaps[0]) : all.slice(gaps[gaps.length - 1]! + 1);
    want = mode === 'prefix' ? truth.slice(0, flow.length) : truth.slice(Math.max(0, truth.length - flow.length));
    if (flow.length === 0) return { ok: false, detail: `no flow on the ${mode === 'prefix' ? 'near' : 'far'} side of the gap` };
  }
  const n = Math.max(flow.length, want.length);
  for (let i = 0; i < n; i++) {
    if (flow[i] !== want[i]) {
      return { ok: false, detail: `line ${i + 1} differs: flow ${flow[i] ?? '(end)'} / truth ${want[i] ?? '(end)'} (${flow.length} vs ${want.length} lines)` };
    }
  }
  const what = { equal: 'identical', prefix: 'before the gap match the start of truth', suffix: 'after the gap match the end of truth',
    'until-disable': 'of truth before its final disable start the flow' }[mode];
  return { ok: true, detail: `${flow.length} lines ${what} (truth: ${truth.length} lines)` };
}
