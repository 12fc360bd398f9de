// Collection (docs/design.md step 6): after the final stop, the filled regions in
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

/** Concatenates the chunks, reading those not copied earlier from memory straight into the stream (one read per chunk). */
export async function stitch(io: TargetIo, chunks: ChunkList): Promise<Uint8Array> {
  const out = new Uint8Array(chunks.bytes);
  let at = 0;
  for (const c of chunks.items) {
    if (c.data !== undefined) out.set(c.data, at);
    else await io.read(c.addr, c.length, out.subarray(at, at + c.length));
    at += c.length;
  }
  return out;
}

/** STATUS at the final stop (docs/sdm/msrs.md §4: Error, Stopped). */
export interface FinalStatus {
  readonly error?: boolean;
  readonly stopped?: boolean;
}

/**
 * Accounts up to the final pointers `hw` (and its STATUS.Error/Stopped), stitches the stream, adds
 * every OVF to the ledger.
 */
export async function collect(
  io: TargetIo, plan: OutputPlan, hw: HwPointers & FinalStatus, losses: LossRecorder, figures: TargetFigures = {},
): Promise<Collected> {
  // Where the pointer is must be known before consume moves the cursor (as in the PMI handler).
  const info = plan.pointerInfo(hw);
  if (plan instanceof SingleRangePlan) await plan.finish(hw, losses, figures.written);
  else await plan.consume(hw);
  // Stopped with the pointer at a full STOP region (OutputOffset = its size): a ToPA STOP fired and no
  // PMI handler moved past it, so whatever the CPU still had was dropped (docs/sdm/output.md §4.4). A
  // TraceStop also sets Stopped but leaves the pointer inside its region, and loses nothing (its
  // TraceStop packet is in the stream: docs/sdm/README.md §4.4).
  if (hw.stopped && info.atFullStopEntry) losses.add(plan.chunks.bytes, null, 'stop');
  // STATUS.Error at the stop: the trace ended there; whatever was still buffered never reached memory
  // (docs/sdm/output.md §6). Error stays set from the fault to here (the driver never clears it), so this
  // is the one place it is recorded, also when a PMI handler saw it first.
  if (hw.error) losses.add(plan.chunks.bytes, null, 'error');
  const stream = await stitch(io, plan.chunks);
  // A STOP loss is where the CPU stopped writing; what follows it is the restart's (findOvfs).
  const cuts = losses.lost.filter((l) => l.reason === 'stop').map((l) => l.at);
  for (const at of findOvfs(stream, cuts)) losses.add(at, null, 'ovf');
  return { stream, ledger: losses.ledger(stream.length, figures) };
}
