// Encoders of the perf.data records ptlab writes. The layouts are the kernel's records (`enum
// perf_event_type` in tools/include/uapi/linux/perf_event.h) and perf's own user records
// (tools/lib/perf/include/perf/event.h: `struct perf_record_auxtrace_info`,
// `struct perf_record_auxtrace`); tools/perf/Documentation/perf.data-file-format.txt describes both.
// Every record starts with `struct perf_event_header` {u32 type; u16 misc; u16 size} and is a
// multiple of 8 bytes long.
import { LeWriter, padTo } from './le-writer.js';
import { MISC_USER, PERF_AUXTRACE_INTEL_PT, RECORD } from './abi.js';

/**
 * The `struct sample_id` a kernel record carries at its end when the event has sample_id_all
 * (uapi perf_event.h): here for sample_type IP|TID|TIME|CPU|IDENTIFIER, the fields TID, TIME, CPU
 * and IDENTIFIER in that order (IP is a sample's own field, not part of sample_id).
 */
export interface SampleId {
  readonly pid: number;
  readonly tid: number;
  readonly time: bigint;
  readonly cpu: number;
  readonly id: bigint;
}

/** One record of `type`: the header, `body`, then the sample_id trailer when given; its size patched in. */
function record(type: number, misc: number, body: (w: LeWriter) => void, sid?: SampleId): Uint8Array {
  const w = new LeWriter();
  w.u32(type).u16(misc).u16(0);
  body(w);
  if (sid) w.i32(sid.pid).i32(sid.tid).u64(sid.time).u32(sid.cpu).u32(0).u64(sid.id);
  if (w.length % 8 !== 0 || w.length > 0xffff) throw new RangeError(`perf record of type ${type} is ${w.length} bytes`);
  w.patchU16(6, w.length);
  return w.bytes();
}

/** PERF_RECORD_COMM: the task's name (at most TASK_COMM_LEN - 1 = 15 characters, as the kernel keeps it). */
export function commRecord(pid: number, tid: number, comm: string, sid: SampleId): Uint8Array {
  return record(RECORD.COMM, 0, (w) => w.i32(pid).i32(tid).cstring(comm.slice(0, 15), 8), sid);
}

/** PERF_RECORD_MMAP of user code: `len` bytes at `start` mapped from `filename` at file offset `pgoff`. */
export function mmapRecord(m: { pid: number; tid: number; start: bigint; len: bigint; pgoff: bigint; filename: string }, sid: SampleId): Uint8Array {
  return record(RECORD.MMAP, MISC_USER, (w) => w.i32(m.pid).i32(m.tid).u64(m.start).u64(m.len).u64(m.pgoff).cstring(m.filename, 8), sid);
}

/** PERF_RECORD_ITRACE_START: the task whose AUX area tracing starts. */
export function itraceStartRecord(pid: number, tid: number, sid: SampleId): Uint8Array {
  return record(RECORD.ITRACE_START, 0, (w) => w.i32(pid).i32(tid), sid);
}

/** PERF_RECORD_AUX: `size` new bytes at `offset` of the AUX area; flags 0 (not truncated, no overwrite, no collision). */
export function auxRecord(offset: bigint, size: bigint, sid: SampleId): Uint8Array {
  return record(RECORD.AUX, 0, (w) => w.u64(offset).u64(size).u64(0n), sid);
}

/** PERF_RECORD_AUXTRACE_INFO of type PERF_AUXTRACE_INTEL_PT with its private words (intel-pt-info.ts). */
export function auxtraceInfoRecord(priv: readonly bigint[]): Uint8Array {
  return record(RECORD.AUXTRACE_INFO, 0, (w) => {
    w.u32(PERF_AUXTRACE_INTEL_PT).u32(0);
    for (const v of priv) w.u64(v);
  });
}

/**
 * PERF_RECORD_AUXTRACE and the trace bytes after it. The data is not counted in header.size; its
 * `size` field is, padded with zeros to 8 bytes (perf record's PERF_AUXTRACE_RECORD_ALIGNMENT, in
 * tools/perf/util/auxtrace.c; a zero byte is a PT PAD packet, SDM "PAD Packet").
 */
export function auxtraceRecord(a: { data: Uint8Array; offset: bigint; idx: number; tid: number; cpu: number }): Uint8Array {
  const size = padTo(a.data.length, 8);
  const head = record(RECORD.AUXTRACE, 0, (w) => w.u64(BigInt(size)).u64(a.offset).u64(0n).u32(a.idx).i32(a.tid).i32(a.cpu).u32(0));
  const out = new Uint8Array(head.length + size);
  out.set(head);
  out.set(a.data, head.length);
  return out;
}

/** PERF_RECORD_FINISHED_ROUND: everything before it may be sorted and delivered (perf's ordered events). */
export function finishedRoundRecord(): Uint8Array {
  return record(RECORD.FINISHED_ROUND, 0, () => undefined);
}
