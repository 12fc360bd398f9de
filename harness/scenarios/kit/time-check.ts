// flow --time against the model's truth (docs/sdm/packets.md §13.1 "Tolerance"): each truth record
// holds the modelled TSC when its branch retired; the flow of the trace, with the model's timing
// facts, must date each of its records no more than P + B (2P + B with CYC) before the last jcc at
// or before it retired — a record is dated by the packet that decided it, and a direct branch by
// the decision before it — where P is one MTC period in TSC ticks and B the longest time between
// two retired branches; and no later than the sixth jcc from it on retired: by then the TNT-8 that
// holds its result (six at most; the model writes no TNT-64) has been written.
import { FlowDecoder } from '../../../driver/decode/flow/flow-decoder.js';
import { ImageSet } from '../../../driver/decode/flow/image.js';
import type { ClockConfig } from '../../sim/trace/clock.js';
import type { TruthLog } from '../../sim/trace/truth.js';

/** The results a TNT-8 holds (docs/sdm/packets.md §3.2). */
const TNT8_RESULTS = 6;

/** What the comparison found. */
export interface TimeCheck {
  readonly ok: boolean;
  /** Ticks behind allowed. */
  readonly tolerance: number;
  readonly detail: string;
}

/** Compares the timed flow of `trace` over the workload `image` with truth records `from`… of `log`. */
export function timesAgainstTruth(
  trace: Uint8Array, image: { readonly image: Uint8Array; readonly base: bigint }, log: TruthLog, from: number,
  clock: ClockConfig, ctl: { readonly MTCFreq: number; readonly CYCEn?: boolean },
): TimeCheck {
  const period = 2 ** ctl.MTCFreq * (clock.tscArtNum / clock.tscArtDen);
  let block = 0;
  for (let i = from + 1; i < log.length; i++) block = Math.max(block, log.tscOf(i) - log.tscOf(i - 1));
  const tolerance = (ctl.CYCEn ? 2 : 1) * period + block;
  const latest = latestDates(log, from), earliest = lastJccDates(log, from);
  const times: (string | undefined)[] = [];
  const set = new ImageSet([{ bytes: image.image, base: image.base }]);
  try {
    const time = { mtcFreq: ctl.MTCFreq, cpuid15Eax: clock.tscArtDen, cpuid15Ebx: clock.tscArtNum, nomFreq: clock.p1 };
    new FlowDecoder(set, { time }).decode(trace, (r) => { if (r.kind !== 'gap' && r.kind !== 'error') times.push(r.tsc); });
  } finally {
    set.dispose();
  }
  const records = log.length - from;
  if (times.length !== records) return { ok: false, tolerance, detail: `${times.length} flow records, ${records} truth records: nothing to compare` };
  let lead = 0, lag = 0, timed = 0, worst = -1;
  times.forEach((t, k) => {
    if (t === undefined) return;
    timed++;
    const d = Number(BigInt(t)) - log.tscOf(from + k);
    if (d > lead) lead = d;
    if (earliest[k]! - Number(BigInt(t)) > lag) lag = earliest[k]! - Number(BigInt(t));
    const e = Number(BigInt(t));
    if ((e < earliest[k]! - tolerance || e > latest[k]!) && worst < 0) worst = k;
  });
  const detail = `${timed} of ${records} records timed; at most ${lag} ticks behind (P ${period}, B ${block}), ${lead} ahead` +
    (worst < 0 ? '' : `; record ${worst} is off by more`);
  return { ok: worst < 0 && timed > 0, tolerance, detail };
}

/** For each record from `from` on: the truth's TSC at the sixth jcc from it on (or at the last record). */
function latestDates(log: TruthLog, from: number): Float64Array {
  const n = log.length - from;
  const out = new Float64Array(n);
  const jccs: number[] = [];
  for (let i = from; i < log.length; i++) if (log.isJcc(i)) jccs.push(i);
  let next = 0;
  for (let k = 0; k < n; k++) {
    while (next < jccs.length && jccs[next]! < from + k) next++;
    const j = jccs[next + TNT8_RESULTS - 1] ?? log.length - 1;
    out[k] = log.tscOf(j);
  }
  return out;
}

/** For each record from `from` on: the truth's TSC at the last jcc at or before it (or at the first record). */
function lastJccDates(log: TruthLog, from: number): Float64Array {
  const out = new Float64Array(log.length - from);
  let at = log.tscOf(from);
  for (let i = from; i < log.length; i++) {
    if (log.isJcc(i)) at = log.tscOf(i);
    out[i - from] = at;
  }
  return out;
}
