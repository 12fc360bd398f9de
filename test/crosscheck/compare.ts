// Compares our packet-json dump with libipt's, line for line, allowing only
// the documented differences (each one asserted on its own in
// differences.test.ts):
//   pwre-hw  docs/sdm/packets.md §3.17: we read PWRE HW from byte-2 bit 7 (SDM
//            Table 36-43, perf); libipt 2.0.5 from bit 3.
import { dumpJson } from '../../driver/decode/json.js';

/** A documented difference, found at packet offset `off`. */
export interface KnownDifference {
  readonly kind: 'pwre-hw';
  readonly off: number;
}

/** The outcome of a comparison: explained differences and anything else. */
export interface DumpComparison {
  readonly known: KnownDifference[];
  readonly unexplained: string[];
}

/** Our decoder's packet-json lines for `bytes`. */
export function ourDump(bytes: Uint8Array): string[] {
  const lines: string[] = [];
  dumpJson(bytes, (line) => lines.push(line));
  return lines;
}

type Json = Record<string, unknown>;

function parse(line: string | undefined): Json | undefined {
  if (line === undefined) return undefined;
  try {
    return JSON.parse(line) as Json;
  } catch {
    return undefined;
  }
}

/** The PWRE HW bit as each decoder reads byte 2 (docs/sdm/packets.md §3.17). */
function isPwreHwDifference(ours: Json, libipt: Json, bytes: Uint8Array): boolean {
  const off = ours['off'];
  if (ours['type'] !== 'pwre' || libipt['type'] !== 'pwre' || typeof off !== 'number') return false;
  if (libipt['off'] !== off || bytes[off] !== 0x02 || bytes[off + 1] !== 0x22) return false;
  const byte2 = bytes[off + 2] ?? 0;
  const sameElsewhere = JSON.stringify({ ...ours, hw: null }) === JSON.stringify({ ...libipt, hw: null });
  return sameElsewhere && ours['hw'] === ((byte2 & 0x80) !== 0) && libipt['hw'] === ((byte2 & 0x08) !== 0);
}

/** Compares the two dumps of `bytes`; at most `limit` unexplained lines are reported. */
export function compareDumps(ours: readonly string[], libipt: readonly string[], bytes: Uint8Array, limit = 5): DumpComparison {
  const known: KnownDifference[] = [];
  const unexplained: string[] = [];
  const n = Math.max(ours.length, libipt.length);
  for (let i = 0; i < n && unexplained.length < limit; i++) {
    const a = ours[i];
    const b = libipt[i];
    if (a === b) continue;
    const ja = parse(a);
    const jb = parse(b);
    if (ja && jb && isPwreHwDifference(ja, jb, bytes)) {
      known.push({ kind: 'pwre-hw', off: ja['off'] as number });
      continue;
    }
    unexplained.push(`line ${i}: ours ${a ?? '(none)'} / libipt ${b ?? '(none)'}`);
    if (a === undefined || b === undefined) break;
  }
  return { known, unexplained };
}
