// The records of a perf.data's data section, read back: each starts with `struct
// perf_event_header` {u32 type; u16 misc; u16 size} and is `size` bytes long, except that
// PERF_RECORD_AUXTRACE is followed by `size` bytes of AUX data its header.size does not count
// (tools/perf/util/session.c `perf_session__process_events()`, `perf_session__process_user_event()`;
// auxtrace.c `perf_event__process_auxtrace()`). Layouts: the kernel's records in
// tools/include/uapi/linux/perf_event.h `enum perf_event_type`, perf's own in
// tools/lib/perf/include/perf/event.h (`struct perf_record_auxtrace_info`, `perf_record_auxtrace`).
import { PERF_RECORD_SAMPLE, PERF_RECORD_USER_TYPE_START, RECORD } from './abi.js';
import { LeReader } from './le-reader.js';
import { PerfDataError } from './perf-data-error.js';
import type { PerfFile } from './perf-file.js';
import { sampleIdReader, type ReadSampleId } from './sample-id.js';

/** sizeof(struct perf_record_auxtrace): the header, size, offset, reference, idx, tid, cpu, reserved. */
const AUXTRACE_HEADER = 48;

/** A record ptlab uses; `at` is its file offset. Other records are `other`, by type. */
export type PerfRecord =
  | { readonly kind: 'mmap'; readonly at: number; readonly mmap2: boolean; readonly misc: number; readonly pid: number; readonly tid: number;
      readonly start: bigint; readonly len: bigint; readonly pgoff: bigint; readonly filename: string; readonly sid?: ReadSampleId }
  | { readonly kind: 'comm'; readonly at: number; readonly pid: number; readonly tid: number; readonly comm: string; readonly sid?: ReadSampleId }
  | { readonly kind: 'itrace_start'; readonly at: number; readonly pid: number; readonly tid: number; readonly sid?: ReadSampleId }
  | { readonly kind: 'aux'; readonly at: number; readonly offset: bigint; readonly size: bigint; readonly flags: bigint; readonly sid?: ReadSampleId }
  | { readonly kind: 'auxtrace_info'; readonly at: number; readonly type: number; readonly priv: readonly bigint[] }
  | { readonly kind: 'auxtrace'; readonly at: number; readonly size: number; readonly offset: bigint; readonly idx: number;
      readonly tid: number; readonly cpu: number; readonly dataAt: number }
  | { readonly kind: 'other'; readonly at: number; readonly type: number };

/** Every record of the data section of `file`, in file order; PerfDataError at the first that does not fit. */
export function readRecords(bytes: Uint8Array, file: PerfFile): PerfRecord[] {
  const r = new LeReader(bytes);
  const sid = sampleIdReader(r, file.attrs);
  const end = file.data.offset + file.data.size;
  const out: PerfRecord[] = [];
  for (let at = file.data.offset; at < end;) {
    if (at + 8 > end) throw new PerfDataError(at, `a record header cut off by the end of the data section (${end - at} bytes left)`);
    const type = r.u32(at, 'a record\'s type'), misc = r.u16(at + 4, 'a record\'s misc'), size = r.u16(at + 6, 'a record\'s size');
    if (size < 8) throw new PerfDataError(at, `a record of type ${type} whose size is ${size}, less than its own 8-byte header`);
    if (at + size > end) throw new PerfDataError(at, `a record of type ${type} and ${size} bytes runs past the end of the data section (at ${end})`);
    const recEnd = at + size;
    const trailer = type < PERF_RECORD_USER_TYPE_START && type !== PERF_RECORD_SAMPLE ? sid(at, recEnd) : undefined;
    const bodyEnd = recEnd - (trailer?.bytes ?? 0);
    const s = trailer === undefined ? {} : { sid: trailer.sid };
    let next = recEnd;
    switch (type) {
      case RECORD.MMAP:
      case RECORD.MMAP2: {
        const mmap2 = type === RECORD.MMAP2;
        // MMAP: pid, tid, addr, len, pgoff, filename; MMAP2 puts maj/min/ino (or a build id: 24 bytes) and prot, flags before the name.
        const nameAt = at + (mmap2 ? 72 : 40);
        out.push({
          kind: 'mmap', at, mmap2, misc, pid: r.i32(at + 8, 'MMAP pid'), tid: r.i32(at + 12, 'MMAP tid'), start: r.u64(at + 16, 'MMAP addr'),
          len: r.u64(at + 24, 'MMAP len'), pgoff: r.u64(at + 32, 'MMAP pgoff'), filename: r.cstring(nameAt, bodyEnd, 'MMAP filename'), ...s,
        });
        break;
      }
      case RECORD.COMM:
        out.push({ kind: 'comm', at, pid: r.i32(at + 8, 'COMM pid'), tid: r.i32(at + 12, 'COMM tid'), comm: r.cstring(at + 16, bodyEnd, 'COMM comm'), ...s });
        break;
      case RECORD.ITRACE_START:
        out.push({ kind: 'itrace_start', at, pid: r.i32(at + 8, 'ITRACE_START pid'), tid: r.i32(at + 12, 'ITRACE_START tid'), ...s });
        break;
      case RECORD.AUX:
        // struct { header; u64 aux_offset; u64 aux_size; u64 flags; sample_id } (uapi perf_event.h PERF_RECORD_AUX).
        if (size < 32) throw new PerfDataError(at, `an AUX record of ${size} bytes, less than its 32`);
        out.push({ kind: 'aux', at, offset: r.u64(at + 8, 'AUX aux_offset'), size: r.u64(at + 16, 'AUX aux_size'), flags: r.u64(at + 24, 'AUX flags'), ...s });
        break;
      case RECORD.AUXTRACE_INFO: {
        // struct perf_record_auxtrace_info { header; u32 type; u32 reserved__; u64 priv[]; }.
        if (size < 16) throw new PerfDataError(at, `an AUXTRACE_INFO record of ${size} bytes, less than its 16`);
        const priv = Array.from({ length: Math.floor((size - 16) / 8) }, (_, i) => r.u64(at + 16 + 8 * i, 'AUXTRACE_INFO priv'));
        out.push({ kind: 'auxtrace_info', at, type: r.u32(at + 8, 'AUXTRACE_INFO type'), priv });
        break;
      }
      case RECORD.AUXTRACE: {
        // struct perf_record_auxtrace { header; u64 size, offset, reference; u32 idx, tid, cpu, reserved__; }, then `size` bytes.
        if (size < AUXTRACE_HEADER) throw new PerfDataError(at, `an AUXTRACE record of ${size} bytes, less than its ${AUXTRACE_HEADER}`);
        const dataSize = r.u64(at + 8, 'AUXTRACE size');
        if (dataSize > BigInt(end - recEnd)) {
          throw new PerfDataError(at, `an AUXTRACE record says ${dataSize} bytes of AUX data follow it, but the data section has ${end - recEnd} bytes left`);
        }
        out.push({
          kind: 'auxtrace', at, size: Number(dataSize), offset: r.u64(at + 16, 'AUXTRACE offset'), idx: r.u32(at + 32, 'AUXTRACE idx'),
          tid: r.i32(at + 36, 'AUXTRACE tid'), cpu: r.i32(at + 40, 'AUXTRACE cpu'), dataAt: recEnd,
        });
        next = recEnd + Number(dataSize);
        break;
      }
      default:
        out.push({ kind: 'other', at, type });
    }
    at = next;
  }
  return out;
}
