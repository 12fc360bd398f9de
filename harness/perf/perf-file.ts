// The parts of a perf.data file around its records, read back: `struct perf_file_header`, the
// attribute section of `struct perf_file_attr` (an attr and the file section of its ids), the data
// section's bounds, and the feature section table after the data (tools/perf/util/header.c
// `perf_session__read_header()`, `perf_file_header__read()`, `perf_header__process_sections()`;
// tools/perf/util/header.h; tools/perf/Documentation/perf.data-file-format.txt). The names of the
// events come from the HEADER_EVENT_DESC feature (header.c `read_event_desc()`).
import { FEATURE, FEATURE_BITS, FILE_HEADER_SIZE, PERF_MAGIC, PIPE_HEADER_SIZE } from './abi.js';
import { eventName } from './event-names.js';
import { LeReader } from './le-reader.js';
import { PerfDataError } from './perf-data-error.js';

/** PERF_ATTR_SIZE_VER0 (uapi perf_event.h): the smallest attr any perf wrote. */
const ATTR_SIZE_VER0 = 64;

/** The fields of an attr that ptlab reads back (uapi perf_event.h `struct perf_event_attr`). */
export interface ReadAttr {
  readonly type: number;
  readonly config: bigint;
  readonly sampleType: bigint;
  /** The bit-field word at offset 40 (abi.ts ATTR_FLAG). */
  readonly flags: bigint;
  readonly ids: readonly bigint[];
  /** Its name: EVENT_DESC's, or event-names.ts's. */
  readonly name: string;
}

/** A perf.data's header, read: where its records are and what its events are. */
export interface PerfFile {
  readonly attrs: readonly ReadAttr[];
  readonly data: { readonly offset: number; readonly size: number };
  /** The ids of the features the bitmap sets, lowest first. */
  readonly features: readonly number[];
}

/** The first 8 bytes of a little-endian perf.data, and of a big-endian one (header.c `check_magic_endian()`). */
export function perfMagicOf(head: Uint8Array): 'le' | 'be' | undefined {
  if (head.length < 8) return undefined;
  const v = new DataView(head.buffer, head.byteOffset, 8);
  if (v.getBigUint64(0, true) === PERF_MAGIC) return 'le';
  if (v.getBigUint64(0, false) === PERF_MAGIC) return 'be';
  return undefined;
}

/** A `struct perf_file_section` {u64 offset; u64 size} at `at`, checked to lie inside the file. */
function section(r: LeReader, at: number, what: string): { offset: number; size: number } {
  const offset = r.u64(at, `the ${what} section's offset`), size = r.u64(at + 8, `the ${what} section's size`);
  if (offset + size > BigInt(r.length)) throw new PerfDataError(at, `the ${what} section (${size} bytes at ${offset}) ends past the end of the file (${r.length} bytes)`);
  return { offset: Number(offset), size: Number(size) };
}

/** The header of the perf.data `bytes`; PerfDataError when it is cut short, corrupt or not a file perf wrote to disk. */
export function readPerfFile(bytes: Uint8Array): PerfFile {
  const r = new LeReader(bytes);
  const magic = perfMagicOf(bytes);
  if (magic === 'be') throw new PerfDataError(0, 'a big-endian perf.data: ptlab reads the little-endian files of x86');
  if (magic !== 'le') throw new PerfDataError(0, 'no PERFILE2 magic: not a perf.data');
  const headerSize = Number(r.u64(8, 'the header size'));
  if (headerSize === PIPE_HEADER_SIZE) throw new PerfDataError(8, 'a perf.data written to a pipe (perf record -o -): ptlab reads the file perf record writes (-o FILE)');
  if (headerSize !== FILE_HEADER_SIZE) throw new PerfDataError(8, `a header of ${headerSize} bytes: perf writes ${FILE_HEADER_SIZE}`);
  r.need(0, FILE_HEADER_SIZE, 'the file header');
  const attrSize = Number(r.u64(16, 'the attr size'));
  if (attrSize < ATTR_SIZE_VER0 + 16 || attrSize % 8 !== 0) throw new PerfDataError(16, `an attr size of ${attrSize}: a perf_file_attr is an attr of at least ${ATTR_SIZE_VER0} bytes and a 16-byte ids section`);
  const attrSec = section(r, 24, 'attrs');
  const data = section(r, 40, 'data');
  if (attrSec.size % attrSize !== 0) throw new PerfDataError(32, `an attrs section of ${attrSec.size} bytes, not a multiple of the attr size ${attrSize}`);

  const features: number[] = [];
  for (let w = 0; w < FEATURE_BITS / 64; w++) {
    const word = r.u64(72 + 8 * w, 'the feature bitmap');
    for (let b = 0; b < 64; b++) if ((word >> BigInt(b)) & 1n) features.push(64 * w + b);
  }
  // The feature section table follows the data: one perf_file_section per set bit, lowest first.
  const table = data.offset + data.size;
  const featureAt = new Map(features.map((id, i) => [id, section(r, table + 16 * i, `feature ${id}`)]));
  const names = eventDescNames(r, featureAt.get(FEATURE.EVENT_DESC));

  const attrs: ReadAttr[] = [];
  for (let at = attrSec.offset; at < attrSec.offset + attrSec.size; at += attrSize) {
    const ids = section(r, at + attrSize - 16, 'attr ids');
    if (ids.size % 8 !== 0) throw new PerfDataError(at + attrSize - 8, `an ids section of ${ids.size} bytes, not whole u64s`);
    const idList = Array.from({ length: ids.size / 8 }, (_, i) => r.u64(ids.offset + 8 * i, 'an attr id'));
    const type = r.u32(at, 'an attr\'s type'), config = r.u64(at + 8, 'an attr\'s config');
    attrs.push({
      type, config, sampleType: r.u64(at + 24, 'an attr\'s sample_type'), flags: r.u64(at + 40, 'an attr\'s flags'), ids: idList,
      name: names[attrs.length] ?? eventName(type, config),
    });
  }
  if (attrs.length === 0) throw new PerfDataError(24, 'no event in the attrs section');
  return { attrs, data, features };
}

/** The event names of HEADER_EVENT_DESC (header.c `write_event_desc()`: nr, attr size, then per event its attr, nr_ids, name, ids). */
function eventDescNames(r: LeReader, sec: { offset: number; size: number } | undefined): string[] {
  if (sec === undefined || sec.size === 0) return [];
  const end = sec.offset + sec.size;
  let at = sec.offset;
  const nr = r.u32(at, 'EVENT_DESC\'s count'), attrSize = r.u32(at + 4, 'EVENT_DESC\'s attr size');
  at += 8;
  const names: string[] = [];
  for (let i = 0; i < nr && at < end; i++) {
    at += attrSize;
    const nrIds = r.u32(at, 'EVENT_DESC\'s nr_ids');
    const len = r.u32(at + 4, 'EVENT_DESC\'s name length');
    names.push(r.cstring(at + 8, Math.min(at + 8 + len, end), 'EVENT_DESC\'s name'));
    at += 8 + len + 8 * nrIds;
    if (at > end) throw new PerfDataError(sec.offset, 'the EVENT_DESC feature runs past its section');
  }
  return names;
}
