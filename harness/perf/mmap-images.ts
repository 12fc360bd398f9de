// The code images of a perf.data: the files its PERF_RECORD_MMAP and MMAP2 records map. perf
// reads a user-space instruction's bytes from the mapped file at `pgoff + (ip - start)`
// (tools/perf/util/map.c `map__map_ip()`, dso.c `dso__data_read_offset()`, called from
// tools/perf/util/intel-pt.c `intel_pt_walk_next_insn()`), so each mapping is the file's bytes
// from `pgoff`, `len` of them, loaded at `start`. `--sysroot DIR` is put before each path, as
// perf's --symfs does (tools/perf/util/symbol.c `symbol_conf.symfs`).
import { join } from 'node:path';
import type { PerfMmap } from './perf-input.js';

/** One mapping of a file's bytes. */
export interface MmapImage {
  /** The file to read: the record's filename under the sysroot. */
  readonly path: string;
  readonly filename: string;
  readonly start: bigint;
  readonly len: bigint;
  readonly pgoff: bigint;
}

/** Names that are no file: the kernel's and the vDSO's ([kernel.kallsyms], [vdso], …), anonymous memory (//anon), none. */
function isFile(name: string): boolean {
  return name !== '' && !name.startsWith('[') && !name.startsWith('//');
}

/** The mappings of `mmaps` that name a file, in file order. */
export function mmapImages(mmaps: readonly PerfMmap[], sysroot?: string): MmapImage[] {
  return mmaps.filter((m) => isFile(m.filename) && m.len > 0n).map((m) => ({
    path: sysroot === undefined ? m.filename : join(sysroot, m.filename),
    filename: m.filename, start: m.start, len: m.len, pgoff: m.pgoff,
  }));
}

/** The bytes of `file` a mapping covers: from its pgoff, at most its len (a mapping's last page may pass the file's end). */
export function mappedBytes(file: Uint8Array, m: MmapImage): Uint8Array {
  const from = Number(m.pgoff < BigInt(file.length) ? m.pgoff : BigInt(file.length));
  const to = BigInt(from) + m.len < BigInt(file.length) ? from + Number(m.len) : file.length;
  return file.subarray(from, to);
}
