// A perf.data given to `ptlab dump` or `ptlab flow` in place of a raw trace: recognised by its
// magic, read whole within a bound (harness/files/read-input.ts), and turned into what a decoder
// needs: the AUX data of each CPU, the losses its AUX records flag, the code its MMAP/MMAP2
// records map, and the intel_pt session's AUXTRACE_INFO. A file that is cut short, corrupt, or
// holds no Intel PT data is one PtError('bad_config') line naming the file.
import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { PtError } from '../../driver/base/errors.js';
import { readBoundedFile } from '../files/read-input.js';
import { AUXTRACE_TYPE_NAMES, PERF_AUXTRACE_INTEL_PT } from './abi.js';
import { auxStreams, type AuxStream } from './aux-streams.js';
import { PerfDataError } from './perf-data-error.js';
import { perfMagicOf, readPerfFile, type ReadAttr } from './perf-file.js';
import { readIntelPtInfo, type IntelPtSession } from './read-intel-pt-info.js';
import { readRecords, type PerfRecord } from './read-records.js';

/**
 * The largest perf.data read (held whole in memory): an hour of one CPU's PT at a few MB/s. A
 * larger recording is cut with `perf record --aux-sample`/snapshots, or by time with `perf data split`.
 */
export const PERF_DATA_MAX_BYTES = 1 << 30;

/** A user-space code mapping of the file (PERF_RECORD_MMAP or MMAP2). */
export type PerfMmap = Extract<PerfRecord, { kind: 'mmap' }>;

/** What a decoder takes from a perf.data. */
export interface PerfInput {
  readonly path: string;
  readonly bytes: Uint8Array;
  readonly attrs: readonly ReadAttr[];
  readonly session: IntelPtSession;
  /** One per AUX buffer, in the file's order of their first data. */
  readonly streams: readonly AuxStream[];
  readonly mmaps: readonly PerfMmap[];
  readonly comms: readonly Extract<PerfRecord, { kind: 'comm' }>[];
}

/** True when `path` is a regular file that starts with a perf.data's magic (either byte order). */
export async function isPerfDataFile(path: string): Promise<boolean> {
  if (path === '-') return false;
  // stat, not open: opening a FIFO, even without blocking, lets its writer start, and closing it
  // again kills that writer (EPIPE), so the trace reader would wait for a writer that is gone.
  const st = await stat(path).catch(() => undefined);
  if (st === undefined || !st.isFile()) return false; // the trace reader reports a missing file in its own words
  let f;
  try {
    f = await open(path, constants.O_RDONLY);
  } catch {
    return false;
  }
  try {
    const head = new Uint8Array(8);
    const { bytesRead } = await f.read(head, 0, 8, 0);
    return bytesRead === 8 && perfMagicOf(head) !== undefined;
  } finally {
    await f.close();
  }
}

/** The perf.data at `path`, read (see the file comment); PtError('bad_config') `PATH: …` when it cannot be. */
export async function readPerfInput(path: string): Promise<PerfInput> {
  const bytes = await readBoundedFile(path, PERF_DATA_MAX_BYTES, 'a perf.data ptlab reads');
  try {
    return perfInputOf(path, bytes);
  } catch (e) {
    if (e instanceof PerfDataError) throw new PtError('bad_config', `${path}: a truncated or corrupt perf.data: ${e.message}`, { cause: e });
    throw e;
  }
}

/** The decoder's view of the perf.data `bytes` (read from `path`, for messages). */
export function perfInputOf(path: string, bytes: Uint8Array): PerfInput {
  const file = readPerfFile(bytes);
  const records = readRecords(bytes, file);
  const infos = records.filter((r) => r.kind === 'auxtrace_info');
  const pt = infos.find((r) => r.type === PERF_AUXTRACE_INTEL_PT);
  if (pt === undefined) {
    const others = infos.map((r) => `${AUXTRACE_TYPE_NAMES[r.type] ?? `type ${r.type}`} AUX data`);
    throw new PtError('bad_config', `${path}: a perf.data without Intel PT data (its events: ${file.attrs.map((a) => a.name).join(', ')}${others.length ? `; ${others.join(', ')}` : ''})`);
  }
  const streams = auxStreams(records);
  if (streams.length === 0) throw new PtError('bad_config', `${path}: an intel_pt perf.data without AUX data (no PERF_RECORD_AUXTRACE): perf record wrote no trace`);
  return {
    path, bytes, attrs: file.attrs, session: readIntelPtInfo(pt.priv, pt.at), streams,
    mmaps: records.filter((r): r is PerfMmap => r.kind === 'mmap'),
    comms: records.filter((r): r is Extract<PerfRecord, { kind: 'comm' }> => r.kind === 'comm'),
  };
}

/** The AUX data of `stream`, chunk by chunk (views into the file's bytes). */
export function* streamChunks(input: PerfInput, stream: AuxStream): Generator<Uint8Array> {
  for (const c of stream.chunks) yield input.bytes.subarray(c.at, c.at + c.length);
}
