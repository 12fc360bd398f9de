// The perf.data file around the records: `struct perf_file_header`, the attribute section
// (`struct perf_file_attr`: an attr and the file section of its ids), the data section, and the
// feature sections after it (tools/perf/util/header.c `perf_session__write_header()` and
// `perf_header__adds_write()`; tools/perf/Documentation/perf.data-file-format.txt).
//
// Layout: header (104 bytes) | ids of each attr | attrs | data | feature section table | features.
import { LeWriter, padTo } from './le-writer.js';
import { ATTR_SIZE, FEATURE, FEATURE_BITS, FILE_HEADER_SIZE, NAME_ALIGN, PERF_MAGIC } from './abi.js';
import { encodeAttr, type PerfAttr } from './attr.js';

/** One event of the file: its attr, the sample ids that name it, and its name for EVENT_DESC. */
export interface PerfEvent {
  readonly attr: PerfAttr;
  readonly ids: readonly bigint[];
  readonly name: string;
}

/** The feature sections ptlab fills in; each says what it is to perf's header printer (`perf report --header-only`). */
export interface PerfFeatures {
  readonly hostname: string;
  readonly osrelease: string;
  readonly version: string;
  readonly arch: string;
  readonly nrCpus: { readonly available: number; readonly online: number };
  readonly cpuDesc: string;
  /** "GenuineIntel,FAMILY,MODEL,STEPPING", as perf's x86 get_cpuid() writes it (tools/perf/arch/x86/util/header.c). */
  readonly cpuid: string;
  readonly pmuMappings: readonly { readonly type: number; readonly name: string }[];
}

/** A `struct perf_header_string`: u32 length (NUL included, padded to NAME_ALIGN), then the string. */
function headerString(w: LeWriter, s: string): void {
  const len = padTo(Buffer.byteLength(s, 'latin1') + 1, NAME_ALIGN);
  w.u32(len).cstring(s, NAME_ALIGN);
}

/** The body of each feature ptlab writes, by feature id (the order of the bitmap, lowest first). */
function featureBodies(f: PerfFeatures, events: readonly PerfEvent[]): [number, Uint8Array][] {
  const str = (s: string): Uint8Array => {
    const w = new LeWriter();
    headerString(w, s);
    return w.bytes();
  };
  const nr = new LeWriter().u32(f.nrCpus.available).u32(f.nrCpus.online).bytes();
  // HEADER_EVENT_DESC (header.c write_event_desc): nr, attr size, then per event the attr, nr_ids, name, ids.
  const desc = new LeWriter().u32(events.length).u32(ATTR_SIZE);
  for (const e of events) {
    desc.raw(encodeAttr(e.attr)).u32(e.ids.length);
    headerString(desc, e.name);
    for (const id of e.ids) desc.u64(id);
  }
  // HEADER_PMU_MAPPINGS (header.c write_pmu_mappings): nr, then per PMU its type and name.
  const pmus = new LeWriter().u32(f.pmuMappings.length);
  for (const p of f.pmuMappings) {
    pmus.u32(p.type);
    headerString(pmus, p.name);
  }
  const bodies: [number, Uint8Array][] = [
    [FEATURE.HOSTNAME, str(f.hostname)],
    [FEATURE.OSRELEASE, str(f.osrelease)],
    [FEATURE.VERSION, str(f.version)],
    [FEATURE.ARCH, str(f.arch)],
    [FEATURE.NRCPUS, nr],
    [FEATURE.CPUDESC, str(f.cpuDesc)],
    [FEATURE.CPUID, str(f.cpuid)],
    [FEATURE.EVENT_DESC, desc.bytes()],
    [FEATURE.PMU_MAPPINGS, pmus.bytes()],
  ];
  return bodies.sort((a, b) => a[0] - b[0]);
}

/** A whole perf.data: `events` in the attribute section, `records` (already encoded, in order) as the data section. */
export function perfDataFile(events: readonly PerfEvent[], records: readonly Uint8Array[], features: PerfFeatures): Uint8Array {
  const idsAt: number[] = [];
  let at = FILE_HEADER_SIZE;
  for (const e of events) {
    idsAt.push(at);
    at += 8 * e.ids.length;
  }
  const attrsAt = at;
  const fileAttrSize = ATTR_SIZE + 16;
  const dataAt = attrsAt + fileAttrSize * events.length;
  const dataSize = records.reduce((n, r) => n + r.length, 0);
  const feats = featureBodies(features, events);

  const w = new LeWriter();
  w.u64(PERF_MAGIC).u64(BigInt(FILE_HEADER_SIZE)).u64(BigInt(fileAttrSize));
  w.u64(BigInt(attrsAt)).u64(BigInt(fileAttrSize * events.length)); // attrs
  w.u64(BigInt(dataAt)).u64(BigInt(dataSize)); //                      data
  w.u64(0n).u64(0n); //                                                 event_types: unused since perf 3.x
  const bitmap = new Array<bigint>(FEATURE_BITS / 64).fill(0n);
  for (const [id] of feats) bitmap[id >> 6]! |= 1n << BigInt(id & 63);
  for (const word of bitmap) w.u64(word);

  for (const e of events) for (const id of e.ids) w.u64(id);
  events.forEach((e, i) => w.raw(encodeAttr(e.attr)).u64(BigInt(idsAt[i]!)).u64(BigInt(8 * e.ids.length)));
  for (const r of records) w.raw(r);

  // The feature section table (one perf_file_section per set bit, lowest first), then the bodies.
  let body = w.length + 16 * feats.length;
  for (const [, b] of feats) {
    w.u64(BigInt(body)).u64(BigInt(b.length));
    body += b.length;
  }
  for (const [, b] of feats) w.raw(b);
  return w.bytes();
}
