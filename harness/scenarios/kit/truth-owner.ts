// Which context a truth record belongs to when several contexts share a CPU: the one whose
// image holds the record's IP; a record without an IP (`async`, an IP-less `disable`) belongs
// to the context of the record before it (TruthRecorder.select does the walk).
import type { SimTarget } from '../../sim/sim-target.js';
import { ipFromBigInt } from '../../sim/trace/events.js';
import type { TruthSelection } from '../../sim/trace/truth.js';

/** The image of workload `w`, as a truth selection's owner. */
export function ownerOf(w: { readonly base: bigint; readonly image: Uint8Array }): NonNullable<TruthSelection['owner']> {
  return { base: ipFromBigInt(w.base), bytes: w.image.length };
}

/** The branch records of CPU 0's truth, from record `from` on, that belong to workload `w`. */
export function ownedBranches(sim: SimTarget, w: { readonly base: bigint; readonly image: Uint8Array }, from = 0): number {
  return sim.truthLog(0)?.branches({ from, owner: ownerOf(w) }) ?? 0;
}
