// The `struct sample_id` trailer a kernel record carries when its event has sample_id_all
// (tools/include/uapi/linux/perf_event.h): { pid, tid } if TID, { time } if TIME, { id } if ID,
// { stream_id } if STREAM_ID, { cpu, res } if CPU, { id } if IDENTIFIER, in that order, at the
// record's end. With several events of different sample_type, IDENTIFIER (always the last u64)
// says whose it is (tools/perf/util/evlist.c `evlist__event2evsel()`, evsel.c `perf_evsel__parse_id_sample()`).
import { ATTR_FLAG, SAMPLE } from './abi.js';
import type { LeReader } from './le-reader.js';
import type { ReadAttr } from './perf-file.js';

/** The trailer's fields ptlab uses. */
export interface ReadSampleId {
  readonly pid?: number;
  readonly tid?: number;
  readonly cpu?: number;
}

/** The trailer's size for `sampleType`. */
function trailerBytes(sampleType: bigint): number {
  return [SAMPLE.TID, SAMPLE.TIME, SAMPLE.ID, SAMPLE.STREAM_ID, SAMPLE.CPU, SAMPLE.IDENTIFIER].filter((b) => (sampleType & b) !== 0n).length * 8;
}

/** A reader of the trailer of the record [at, end): its fields and size, or undefined when the record has none (or too small to hold one). */
export function sampleIdReader(r: LeReader, attrs: readonly ReadAttr[]): (at: number, end: number) => { sid: ReadSampleId; bytes: number } | undefined {
  const withIds = attrs.filter((a) => (a.flags & ATTR_FLAG.sample_id_all) !== 0n);
  if (withIds.length === 0) return () => undefined;
  const same = withIds.every((a) => a.sampleType === withIds[0]!.sampleType);
  const byId = new Map(withIds.flatMap((a) => a.ids.map((id) => [id, a] as const)));
  return (at, end) => {
    let attr: ReadAttr | undefined = withIds[0];
    if (!same) {
      if (end - at < 16 || (attr!.sampleType & SAMPLE.IDENTIFIER) === 0n) return undefined;
      attr = byId.get(r.u64(end - 8, 'a sample_id\'s identifier'));
      if (attr === undefined) return undefined;
    }
    const st = attr!.sampleType, bytes = trailerBytes(st);
    if (bytes === 0 || end - at < 8 + bytes) return undefined;
    let p = end - bytes;
    const sid: { pid?: number; tid?: number; cpu?: number } = {};
    if (st & SAMPLE.TID) { sid.pid = r.i32(p, 'sample_id pid'); sid.tid = r.i32(p + 4, 'sample_id tid'); p += 8; }
    if (st & SAMPLE.TIME) p += 8;
    if (st & SAMPLE.ID) p += 8;
    if (st & SAMPLE.STREAM_ID) p += 8;
    if (st & SAMPLE.CPU) sid.cpu = r.u32(p, 'sample_id cpu');
    return { sid, bytes };
  };
}
