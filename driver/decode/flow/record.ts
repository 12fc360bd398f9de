// The flow decoder's reusable output record and its flow-json line
// (docs/formats/flow-json.md: keys in the spec's order, no spaces, hex as in
// packet-json.md). Two record kinds are ours, not the spec's:
//
//   {"kind":"gap","bytes":N|null,"reason":R}        docs/formats/flow-json.md "gap" (from the loss ledger)
//   {"kind":"error","error":CODE,"off":N[,"ip":"0x…"]}
//
// `error` records: reconstruction failed at trace offset `off` (the packet
// being applied); `ip` is where the walk stood, when known. Decoding resumes
// at the next PSB. Codes (libipt's pt_error_code spellings where it has one):
//   nomap           the walk reached an IP outside every image (pte_nomap)
//   bad_insn        bytes at the IP do not decode (pte_bad_insn)
//   bad_query       packet and code disagree: a TIP where a TNT bit is needed,
//                   a FUP/PSB+ IP the walk cannot reach, a not-taken bit for
//                   a RET … (pte_bad_query)
//   retstack_empty  compressed RET with an empty return stack (pte_retstack_empty)
//   bad_mode        MODE.Exec for a mode this decoder does not follow (16/32-bit, invalid)
//   runaway         too many instructions without any packet (an endless direct loop)
//   bad_opc, bad_packet, eos, nosync   from the packet layer (docs/formats/packet-json.md)
import { hex64 } from '../json.js';
import type { BranchKind } from './insn-class.js';

/** What the flow decoder reports. */
export type FlowRecordKind = 'branch' | 'async' | 'enable' | 'disable' | 'overflow' | 'gap' | 'error';

/** Error codes of `error` records (see the file header). */
export type FlowErrorCode =
  | 'nomap' | 'bad_insn' | 'bad_query' | 'retstack_empty' | 'bad_mode' | 'runaway'
  | 'bad_opc' | 'bad_packet' | 'eos' | 'nosync';

/** Why bytes are missing (losses.json `lost[].reason`, docs/design.md). */
export type GapReason = 'stop' | 'wrap' | 'error' | 'ovf';

/**
 * One flow record, reused by the decoder (valid only during the callback).
 * IPs are uint32 halves; `hasIp`/`hasTo` say whether they are present.
 */
export class FlowRecord {
  kind: FlowRecordKind = 'branch';
  /** branch: the flow-json kind. */
  branch: BranchKind = 'jmp';
  /** branch: jcc outcome. */
  taken = false;
  /** branch `ip`, async `from`, enable/disable/overflow `ip`, error `ip`. */
  ipLo = 0;
  ipHi = 0;
  hasIp = false;
  /** branch/async `to`. */
  toLo = 0;
  toHi = 0;
  hasTo = false;
  /** gap: bytes lost (null when unknown). */
  bytes: number | null = null;
  /** gap: the ledger's reason. */
  reason: GapReason = 'stop';
  /** error: the code. */
  error: FlowErrorCode = 'bad_query';
  /** error: trace offset of the packet being applied. */
  offset = 0;
  /** flow --time: the estimated TSC when the record was made (`0x…`), undefined before the first TSC or without --time. */
  tsc: string | undefined = undefined;
}

/**
 * The flow-json line (no newline) of a record. With `symbol` (flow --elf), an address it names is
 * followed by its name: `"sym"` after `ip` or `from`, `"toSym"` after `to` (docs/formats/flow-json.md).
 */
export function flowJsonLine(r: FlowRecord, symbol?: (lo: number, hi: number) => string | undefined): string {
  const line = recordJson(r, symbol);
  // flow --time: "tsc" closes the record (docs/formats/flow-json.md), gap and error records aside.
  return r.tsc === undefined || r.kind === 'gap' || r.kind === 'error' ? line : `${line.slice(0, -1)},"tsc":"${r.tsc}"}`;
}

function recordJson(r: FlowRecord, symbol?: (lo: number, hi: number) => string | undefined): string {
  const named = (key: string, lo: number, hi: number): string => {
    const name = symbol?.(lo, hi);
    return name === undefined ? '' : `,"${key}":${JSON.stringify(name)}`;
  };
  switch (r.kind) {
    case 'branch': {
      const t = r.branch === 'jcc' ? (r.taken ? ',"taken":true' : ',"taken":false') : '';
      const to = r.hasTo ? `,"to":"${hex64(r.toLo, r.toHi)}"${named('toSym', r.toLo, r.toHi)}` : '';
      return `{"ip":"${hex64(r.ipLo, r.ipHi)}"${named('sym', r.ipLo, r.ipHi)},"kind":"${r.branch}"${t}${to}}`;
    }
    case 'async':
      return `{"kind":"async","from":"${hex64(r.ipLo, r.ipHi)}"${named('sym', r.ipLo, r.ipHi)},"to":"${hex64(r.toLo, r.toHi)}"${named('toSym', r.toLo, r.toHi)}}`;
    case 'enable':
      return `{"kind":"enable","ip":"${hex64(r.ipLo, r.ipHi)}"${named('sym', r.ipLo, r.ipHi)}}`;
    case 'disable':
    case 'overflow':
      return r.hasIp ? `{"kind":"${r.kind}","ip":"${hex64(r.ipLo, r.ipHi)}"${named('sym', r.ipLo, r.ipHi)}}` : `{"kind":"${r.kind}"}`;
    case 'gap':
      return `{"kind":"gap","bytes":${r.bytes === null ? 'null' : String(r.bytes)},"reason":"${r.reason}"}`;
    case 'error': {
      const ip = r.hasIp ? `,"ip":"${hex64(r.ipLo, r.ipHi)}"` : '';
      return `{"kind":"error","error":"${r.error}","off":${r.offset}${ip}}`;
    }
  }
}

/** A readable one-line form of a record (the CLI listing without --json). */
export function flowTextLine(r: FlowRecord, symbol?: (lo: number, hi: number) => string | undefined): string {
  const line = recordText(r, symbol);
  return r.tsc === undefined || r.kind === 'gap' || r.kind === 'error' ? line : `${line}  tsc ${r.tsc}`;
}

function recordText(r: FlowRecord, symbol?: (lo: number, hi: number) => string | undefined): string {
  // An address, and after it `<sym+0xoff>` where `symbol` names one (flow --elf: the ELF's symbols).
  const at = (lo: number, hi: number): string => {
    const name = symbol?.(lo, hi);
    return name === undefined ? hex64(lo, hi) : `${hex64(lo, hi)} <${name}>`;
  };
  const ip = (lo: number, hi: number): string => at(lo, hi).padStart(18);
  switch (r.kind) {
    case 'branch': {
      const what = r.branch === 'jcc' ? `jcc ${r.taken ? 'taken' : 'not-taken'}` : r.branch;
      return `${ip(r.ipLo, r.ipHi)}  ${what.padEnd(13)}${r.hasTo ? ` -> ${at(r.toLo, r.toHi)}` : ' -> ?'}`;
    }
    case 'async':
      return `${ip(r.ipLo, r.ipHi)}  ${'async'.padEnd(13)} -> ${at(r.toLo, r.toHi)}`;
    case 'enable':
      return `${''.padStart(18)}  enable at ${at(r.ipLo, r.ipHi)}`;
    case 'disable':
      return `${''.padStart(18)}  disable${r.hasIp ? ` at ${at(r.ipLo, r.ipHi)}` : ''}`;
    case 'overflow':
      return `${''.padStart(18)}  overflow${r.hasIp ? `, resumed at ${at(r.ipLo, r.ipHi)}` : ''}`;
    case 'gap':
      return `${''.padStart(18)}  gap: ${r.bytes === null ? 'unknown' : r.bytes} bytes lost (${r.reason})`;
    case 'error':
      return `${''.padStart(18)}  error ${r.error} at trace offset ${r.offset}${r.hasIp ? ` (ip ${hex64(r.ipLo, r.ipHi)})` : ''}`;
  }
}
