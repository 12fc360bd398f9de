// How the calls a RecordingTarget forwards become a transcript line's fields (docs/transcript.md):
// an XSAVE area as the 9 MSRs of state component 8 by SDM name (docs/sdm/xsave.md), bytes as hex,
// and each target event with what its top half did.
import { hex } from '../../driver/base/hex.js';
import { buildPtXsaveArea, decodePtState, PT_STATE_DEFAULT_SIZE, ptStateBytes, XSAVE_EXTENDED_OFFSET } from '../../driver/hw/xsave.js';
import type { TargetEvent } from '../../driver/target.js';
import type { TranscriptLine } from './transcript-line.js';

/** A line's fields beyond those every line has. */
export type Fields = Omit<TranscriptLine, 'seq' | 't_us' | 'cpu' | 'op'>;

/** The 9 MSRs of component 8 in an XSAVE area, by SDM name (empty when the area has none or is malformed). */
export function areaFields(a: Uint8Array): Fields {
  try {
    const bytes = ptStateBytes(a);
    if (!bytes) return {};
    return { area: Object.fromEntries(Object.entries(decodePtState(bytes)).map(([k, v]) => [k, hex(v)])) };
  } catch {
    return {}; // a malformed area is the target's to refuse; the transcript shows the raw call
  }
}

/**
 * Whether `area` is the area `buildPtXsaveArea` makes from its own component-8 MSRs (the compacted
 * format XSAVES writes): then its `area` fields say all of it, and its bytes are not recorded.
 */
export function isCanonicalArea(area: Uint8Array): boolean {
  try {
    const bytes = ptStateBytes(area);
    if (!bytes || area.length !== XSAVE_EXTENDED_OFFSET + PT_STATE_DEFAULT_SIZE) return false;
    const canonical = buildPtXsaveArea({ state: decodePtState(bytes) });
    return canonical.length === area.length && canonical.every((b, i) => b === area[i]);
  } catch {
    return false;
  }
}

/** Bytes as lowercase hex, two digits each. */
export function bytesHex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

/** An event's fields: what the target reported (a PMI with what its top half did). */
export function eventFields(ev: TargetEvent): Fields {
  switch (ev.kind) {
    // The top half's actions: acknowledged [55], cleared TraceEn, froze the traced task (when the target says).
    case 'pmi': return { value: hex(ev.globalStatus), result: `ctl=${hex(ev.ctl)} status=${hex(ev.status)} acked=${ev.acked} traceEnCleared=${ev.traceEnCleared}${ev.frozen === undefined ? '' : ` frozen=${ev.frozen}`}` };
    case 'slice': return { value: String(ev.branches) };
    case 'exit': return { value: String(ev.code) };
    case 'fault': return { fault: ev.error.message };
    default: { const x: never = ev; return x; }
  }
}
