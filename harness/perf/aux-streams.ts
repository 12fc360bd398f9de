// The AUX data of a perf.data as one stream per AUX buffer, and the losses its AUX records flag.
//
// perf queues PERF_RECORD_AUXTRACE buffers by `idx`, the AUX mmap they were read from: one per
// CPU with per-CPU mmaps, one per thread with --per-thread (tools/perf/util/auxtrace.c
// `auxtrace_queues__add_event()`); a queue's buffers follow one another in the file in AUX-area
// order, `offset` the position of their first byte in the AUX area. perf record pads each buffer
// with zeros to 8 bytes and counts the padding in `size` (auxtrace.c `__auxtrace_mmap__read()`,
// PERF_AUXTRACE_RECORD_ALIGNMENT): the bytes a buffer really holds end where the next buffer of
// its queue starts, or for the last one where the kernel's AUX records say the data ends.
//
// PERF_RECORD_AUX (uapi perf_event.h) says `aux_size` bytes landed at `aux_offset`, and with its
// flags what went wrong; perf counts TRUNCATED, PARTIAL and COLLISION as lost or damaged AUX data
// (tools/perf/util/session.c `perf_session__warn_about_errors()`: "AUX data lost", "had gaps in
// it", "detected collision"). OVERWRITE (snapshot mode) loses nothing by itself.
import type { GapReason } from '../../driver/decode/flow/record.js';
import { AUX_FLAG } from './abi.js';
import type { PerfRecord } from './read-records.js';

/** PERF_AUXTRACE_RECORD_ALIGNMENT (auxtrace.h): a buffer carries at most 7 bytes of padding. */
const ALIGN = 8;

/** One loss an AUX record flags, placed in its stream. */
export interface AuxLoss {
  /** The stream offset where the flagged AUX data ends: where the loss lies (a ledger's `at`). */
  readonly at: number;
  /** The AUX record's data: `size` bytes at AUX-area offset `auxOffset`. */
  readonly auxOffset: bigint;
  readonly auxSize: bigint;
  /** The flags set, by name (TRUNCATED, PARTIAL, COLLISION). */
  readonly flags: readonly string[];
  /** What ptlab's flow decoder calls it (driver/decode/flow/record.ts GapReason). */
  readonly reason: GapReason;
}

/** The AUX data of one AUX buffer (one CPU, or one thread), as file byte ranges in stream order. */
export interface AuxStream {
  readonly idx: number;
  /** The CPU of its first AUXTRACE record; -1 for a per-thread buffer. */
  readonly cpu: number;
  readonly tid: number;
  readonly chunks: readonly { readonly at: number; readonly length: number; readonly auxOffset: bigint }[];
  readonly bytes: number;
  readonly losses: readonly AuxLoss[];
}

type AuxRecord = Extract<PerfRecord, { kind: 'aux' }>;
type AuxtraceRecord = Extract<PerfRecord, { kind: 'auxtrace' }>;

/** The flags that mean lost or damaged data, with the gap reason each gives. */
const LOSS_FLAGS: readonly [string, bigint, GapReason][] = [
  // The AUX area was full: the PT driver stopped the trace there (arch/x86/events/intel/pt.c pt_handle_status(), ToPA STOP).
  ['TRUNCATED', AUX_FLAG.TRUNCATED, 'stop'],
  ['PARTIAL', AUX_FLAG.PARTIAL, 'error'],
  ['COLLISION', AUX_FLAG.COLLISION, 'error'],
];

/** The bytes buffer `b` holds: its size less the padding the next buffer's offset (or `end`) shows, when that is at most 7 bytes. */
function heldBytes(b: AuxtraceRecord, next: bigint | undefined): number {
  if (next === undefined || next < b.offset) return b.size;
  const held = next - b.offset;
  return held <= BigInt(b.size) && BigInt(b.size) - held < BigInt(ALIGN) ? Number(held) : b.size;
}

/** Whether AUX record `a` belongs to stream `s`: by its sample_id's CPU (per-CPU) or thread (per-thread); any when it has none. */
function ofStream(a: AuxRecord, s: { cpu: number; tid: number }, only: boolean): boolean {
  if (s.cpu >= 0 && a.sid?.cpu !== undefined) return a.sid.cpu === s.cpu;
  if (s.cpu < 0 && a.sid?.tid !== undefined) return a.sid.tid === s.tid;
  return only;
}

/** The AUX streams of `records`, in the order their first buffer appears in the file. */
export function auxStreams(records: readonly PerfRecord[]): AuxStream[] {
  const byIdx = new Map<number, AuxtraceRecord[]>();
  for (const r of records) {
    if (r.kind !== 'auxtrace') continue;
    const list = byIdx.get(r.idx);
    if (list === undefined) byIdx.set(r.idx, [r]); else list.push(r);
  }
  const auxes = records.filter((r): r is AuxRecord => r.kind === 'aux');
  return [...byIdx].map(([idx, bufs]) => {
    const first = bufs[0]!;
    const mine = auxes.filter((a) => ofStream(a, first, byIdx.size === 1));
    const auxEnd = mine.reduce<bigint | undefined>((m, a) => (m === undefined || a.offset + a.size > m ? a.offset + a.size : m), undefined);
    let bytes = 0;
    const chunks = bufs.map((b, i) => {
      const c = { at: b.dataAt, length: heldBytes(b, bufs[i + 1]?.offset ?? auxEnd), auxOffset: b.offset, streamAt: bytes };
      bytes += c.length;
      return c;
    });
    /** The stream offset of AUX-area offset `x`: in the buffer that holds it, else the end of the last buffer before it. */
    const streamAt = (x: bigint): number => {
      let at = 0;
      for (const c of chunks) {
        if (x < c.auxOffset) break;
        at = c.streamAt + Math.min(c.length, Number(x - c.auxOffset));
      }
      return at;
    };
    const losses: AuxLoss[] = [];
    for (const a of mine) {
      const flags = LOSS_FLAGS.filter(([, bit]) => (a.flags & bit) !== 0n);
      if (flags.length === 0) continue;
      losses.push({ at: streamAt(a.offset + a.size), auxOffset: a.offset, auxSize: a.size, flags: flags.map(([n]) => n), reason: flags[0]![2] });
    }
    losses.sort((p, q) => p.at - q.at);
    return { idx, cpu: first.cpu, tid: first.tid, chunks: chunks.map(({ at, length, auxOffset }) => ({ at, length, auxOffset })), bytes, losses };
  });
}

/** How a stream is named in messages and in dump's line: `cpu N`, or `tid T (per-thread)`. */
export function streamName(s: Pick<AuxStream, 'cpu' | 'tid'>): string {
  return s.cpu >= 0 ? `cpu ${s.cpu}` : `tid ${s.tid} (per-thread)`;
}

/** A loss as one line: where in the stream, which AUX data, what the flags say, and that the count is not known. */
export function lossLine(s: Pick<AuxStream, 'cpu' | 'tid'>, l: AuxLoss): string {
  const end = l.auxOffset + l.auxSize;
  return `${streamName(s)}: AUX data lost at byte ${l.at} of the stream (${l.reason}): the AUX record of bytes ${l.auxOffset}-${end} ` +
    `of the AUX area is flagged ${l.flags.join(', ')}; how many bytes were lost is not recorded`;
}
