// PSB search, compatible with libipt 2.0.5's pt_sync_forward()/pt_find_psb()
// so that our error/resync output matches a libipt-based dump byte for byte
// (docs/formats/packet-json.md "Errors and resynchronisation").
//
// libipt scans 64-bit words for the `02 82` pattern, follows the run of
// `02 82` pairs to its end and takes the LAST 16 bytes of the run as the PSB
// (so `02 82` x 9 syncs at offset 2), skipping PSBs that start before the
// search start. A run of pairs shorter than 16 bytes holds no PSB. After an
// error at X, pt_pkt_sync_forward() starts searching at X - 15 ("find PSB
// that have been partially consumed by a preceding packet").
import { PSB_HI, PSB_LO, PTPS } from './opcodes.js';

/** How far before an error offset the resync search starts (libipt pt_pkt_sync_forward). */
export const RESYNC_LOOKBACK = PTPS.PSB - 1;

/**
 * Finds the first PSB starting at or after `from` (libipt rules above).
 * Returns its index, or a negative `~r` when there is none: `r` is where the
 * search must restart once more bytes are appended (only meaningful when
 * `final` is false: a run or a lone `02` at the end may continue).
 */
export function findPsb(buf: Uint8Array, from: number, final: boolean): number {
  const end = buf.length;
  let i = from;
  for (;;) {
    // The next `02 82` pair at or after i.
    let j = buf.indexOf(PSB_HI, i);
    while (j !== -1 && j + 1 < end && buf[j + 1] !== PSB_LO) j = buf.indexOf(PSB_HI, j + 1);
    if (j === -1) return ~end;
    if (j + 1 >= end) return ~j;
    // Follow the run of pairs.
    let k = j + 2;
    while (k + 1 < end && buf[k] === PSB_HI && buf[k + 1] === PSB_LO) k += 2;
    if (!final && (k === end || (k === end - 1 && buf[k] === PSB_HI))) {
      // The run may go on in the next chunk: keep its last 16 bytes (same pair phase).
      return ~Math.max(j, k - PTPS.PSB);
    }
    if (k - j >= PTPS.PSB) return k - PTPS.PSB;
    i = k;
  }
}
