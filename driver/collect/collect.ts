// Collection (DESIGN.md step 6): after the final stop, the filled regions in
// write order become one stream, and the ledger says what is missing.
import type { TargetIo } from '../io.js';
import type { HwPointers, OutputPlan } from '../output/plan.js';
import { SingleRangePlan } from '../output/single-range.js';
import type { ChunkList } from './chunks.js';
import type { LossLedger, LossRecorder } from './ledger.js';
import { findOvfs } from './ovf.js';

/** What the target knows about its own output (sim only). */
export interface TargetFigures {
  readonly written?: number;
  readonly dropped?: number;
}

/** The stitched stream and its ledger. */
export interface Collected {
  readonly stream: Uint8Array;
  readonly ledger: LossLedger;
}

/** Concatenates the chunks, reading from memory those not copied earlier (one read per chunk). */
export async function stitch(io: TargetIo, chunks: ChunkList): Promise<Uint8Array> {
  const out = new Uint8Array(chunks.bytes);
  let at = 0;
  for (const c of chunks.items) {
    out.set(c.data ?? await io.read(c.addr, c.length), at);
    at += c.length;
  }
  return out;
}

/** Accounts up to the final pointers `hw` (and its STATUS.Error), stitches the stream, adds every OVF to the ledger. */
export async function collect(
  io: TargetIo, plan: OutputPlan, hw: HwPointers & { readonly error?: boolean }, losses: LossRecorder, figures: TargetFigures = {},
): Promise<Collected> {
  if (plan instanceof SingleRangePlan) await plan.finish(hw, losses, figures.written);
  else await plan.consume(hw);
  // STATUS.Error at the stop: the trace ends here; whatever was still buffered never reached memory (spec/output.md §6).
  if (hw.error) losses.add(plan.chunks.bytes, null, 'error');
  const stream = await stitch(io, plan.chunks);
  for (const at of findOvfs(stream)) losses.add(at, null, 'ovf');
  return { stream, ledger: losses.ledger(stream.length, figures) };
}
