// "ptlab flow on the exported files equals truth.jsonl":
// reads trace.pt, image.bin + image.json and losses.json back from a run
// directory and reconstructs the flow exactly as `ptlab flow trace.pt
// --image image.bin@BASE --losses losses.json --json` does. flowOfStream and compareFlowLines are
// the same decode and comparison on bytes in memory (`ptlab seq`'s `flow: truth`).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FlowDecoder, type FlowLoss } from '../../driver/decode/flow/flow-decoder.js';
import { ImageSet } from '../../driver/decode/flow/image.js';
import { flowJsonLine } from '../../driver/decode/flow/record.js';
import type { FlowMatch } from '../scenarios/kit/context.js';
import { RUN_FILES } from '../rundir/run-files.js';

/** A code image the flow decoder reads instructions from: its bytes at `base`. */
export interface FlowImage {
  readonly bytes: Uint8Array;
  readonly base: bigint;
}

/** Calls `line` with each flow-json line of `trace` over `images`, with the gaps of `lost` (the loss ledger), as `ptlab flow --json` prints them. */
export function forEachFlowLine(trace: Uint8Array, images: readonly FlowImage[], lost: readonly FlowLoss[], line: (l: string) => void): void {
  const set = new ImageSet(images.map((i) => ({ bytes: i.bytes, base: i.base })));
  try {
    new FlowDecoder(set, { ledger: lost }).decode(trace, (r) => line(flowJsonLine(r)));
  } finally {
    set.dispose();
  }
}

/** The flow-json lines of `trace` over `images`, with the gaps of `lost`, as `ptlab flow --json` prints them. */
export function flowOfStream(trace: Uint8Array, images: readonly FlowImage[], lost: readonly FlowLoss[]): string[] {
  const out: string[] = [];
  forEachFlowLine(trace, images, lost, (l) => out.push(l));
  return out;
}

/** What the flow of a run directory is made from: trace.pt, image.bin at image.json's base, losses.json's gaps. */
async function flowInputOfRunDir(dir: string): Promise<{ trace: Uint8Array; images: FlowImage[]; lost: FlowLoss[] }> {
  const trace = new Uint8Array(await readFile(join(dir, RUN_FILES.trace)));
  const image = new Uint8Array(await readFile(join(dir, RUN_FILES.image)));
  const meta = JSON.parse(await readFile(join(dir, RUN_FILES.imageJson), 'utf8')) as { base: string };
  const losses = JSON.parse(await readFile(join(dir, RUN_FILES.losses), 'utf8')) as { lost: FlowLoss[] };
  return { trace, images: [{ bytes: image, base: BigInt(meta.base) }], lost: losses.lost };
}

/** The flow-json lines of the run directory `dir`. */
export async function flowOfRunDir(dir: string): Promise<string[]> {
  const { trace, images, lost } = await flowInputOfRunDir(dir);
  return flowOfStream(trace, images, lost);
}

const isGap = (l: string): boolean => l.startsWith('{"kind":"gap"');

/** Truth records by index: a list of lines, or truth.jsonl's bytes read in place (TruthText). */
export interface TruthLines {
  readonly length: number;
  at(i: number): string;
  /** Line `i` is `s` (without making line i's string where it can). */
  is(i: number, s: string): boolean;
}

/** `lines` as TruthLines. */
export function truthLinesOf(lines: readonly string[]): TruthLines {
  return { length: lines.length, at: (i) => lines[i]!, is: (i, s) => lines[i] === s };
}

/** truth.jsonl's bytes as lines (ASCII, newline-terminated; empty lines are not records). */
export class TruthText implements TruthLines {
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;
  readonly length: number;

  constructor(private readonly bytes: Uint8Array) {
    let n = 0;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) n++;
    this.starts = new Int32Array(n + 1);
    this.ends = new Int32Array(n + 1);
    let k = 0, from = 0;
    for (let i = 0; i <= bytes.length; i++) {
      if (i < bytes.length && bytes[i] !== 0x0a) continue;
      if (i > from) { this.starts[k] = from; this.ends[k] = i; k++; }
      from = i + 1;
    }
    this.length = k;
  }

  at(i: number): string {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.starts[i]!, this.ends[i]! - this.starts[i]!).toString('latin1');
  }

  is(i: number, s: string): boolean {
    const from = this.starts[i]!;
    if (this.ends[i]! - from !== s.length) return false;
    for (let k = 0; k < s.length; k++) if (this.bytes[from + k] !== s.charCodeAt(k)) return false;
    return true;
  }
}

/** Flow lines fed in order, compared with the truth lines [from, from + count): the first difference. */
class LineMatch {
  private n = 0;
  private first: { line: number; flow: string } | undefined;

  constructor(private readonly truth: TruthLines, private readonly from: number, private readonly count: number) {}

  add(flow: string): void {
    if (this.first === undefined && (this.n >= this.count || !this.truth.is(this.from + this.n, flow))) this.first = { line: this.n, flow };
    this.n++;
  }

  /** ok, or where the lines first differ; `what` says how they match when they do. */
  result(what: string): { ok: boolean; detail: string } {
    const first = this.first ?? (this.n < this.count ? { line: this.n, flow: '(end)' } : undefined);
    if (first !== undefined) {
      const w = first.line < this.count ? this.truth.at(this.from + first.line) : '(end)';
      return { ok: false, detail: `line ${first.line + 1} differs: flow ${first.flow} / truth ${w} (${this.n} vs ${this.count} lines)` };
    }
    return { ok: true, detail: `${this.n} lines ${what} (truth: ${this.truth.length} lines)` };
  }
}

const MATCHED: Readonly<Record<FlowMatch, string>> = {
  equal: 'identical', prefix: 'before the gap match the start of truth', suffix: 'after the gap match the end of truth',
  'until-disable': 'of truth before its final disable start the flow',
};

/**
 * Compares the flow of `dir` with its truth.jsonl as `mode` says: ok, and where they first differ.
 * `truth`: the bytes truth.jsonl was just written with, when the caller has them (the file is
 * then not read back). An `equal` comparison is made as the flow is decoded, line by line.
 */
export async function compareFlowWithTruth(dir: string, mode: FlowMatch = 'equal', truth?: Uint8Array): Promise<{ ok: boolean; detail: string }> {
  const { trace, images, lost } = await flowInputOfRunDir(dir);
  const want = new TruthText(truth ?? new Uint8Array(await readFile(join(dir, RUN_FILES.truth))));
  if (mode !== 'equal') return compareFlowLines(flowOfStream(trace, images, lost), want, mode);
  const match = new LineMatch(want, 0, want.length);
  forEachFlowLine(trace, images, lost, (l) => match.add(l));
  return match.result(MATCHED.equal);
}

/** Compares reconstructed flow lines `all` with truth lines as `mode` says: ok, and where they first differ. */
export function compareFlowLines(all: readonly string[], truth: TruthLines, mode: FlowMatch = 'equal'): { ok: boolean; detail: string } {
  // The flow lines [f0, f1) are compared with the truth lines [w0, w1).
  let f0 = 0, f1 = all.length, w0 = 0, w1 = truth.length;
  if (mode === 'until-disable') {
    w1 = Math.max(0, truth.length - 1);
    f1 = Math.min(all.length, w1);
  } else if (mode !== 'equal') {
    const gaps = all.flatMap((l, i) => (isGap(l) ? [i] : []));
    if (gaps.length === 0) return { ok: false, detail: `expected a gap record in the flow, found none (${all.length} lines)` };
    if (mode === 'prefix') {
      f1 = gaps[0]!;
      w1 = Math.min(truth.length, f1);
    } else {
      f0 = gaps[gaps.length - 1]! + 1;
      w0 = Math.max(0, truth.length - (f1 - f0));
    }
    if (f1 === f0) return { ok: false, detail: `no flow on the ${mode === 'prefix' ? 'near' : 'far'} side of the gap` };
  }
  const match = new LineMatch(truth, w0, w1 - w0);
  for (let i = f0; i < f1; i++) match.add(all[i]!);
  return match.result(MATCHED[mode]);
}
