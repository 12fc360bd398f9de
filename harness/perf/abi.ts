// The numbers of the perf.data format that ptlab writes: record types, sample-type bits, attr
// flag bits and feature ids. Each group names the header it comes from; the kernel's are ABI
// (tools/include/uapi/linux/perf_event.h), the user-space ones are perf's own
// (tools/lib/perf/include/perf/event.h, tools/perf/util/header.h, tools/perf/util/auxtrace.h)
// and are described in tools/perf/Documentation/perf.data-file-format.txt.

/** `struct perf_file_header.magic`: "PERFILE2" read as a little-endian u64 (tools/perf/util/header.c, `__perf_magic2`). */
export const PERF_MAGIC = 0x32454c4946524550n;

/** sizeof(struct perf_file_header): magic, size, attr_size, three sections and the 256-bit feature bitmap (tools/perf/util/header.h). */
export const FILE_HEADER_SIZE = 104;

/** sizeof(struct perf_event_attr) at PERF_ATTR_SIZE_VER7 (sig_data, Linux 5.13): the size perf 6.1 itself writes. */
export const ATTR_SIZE = 128;

/** HEADER_FEAT_BITS in tools/perf/util/header.h: the feature bitmap's width. */
export const FEATURE_BITS = 256;

/** `enum perf_event_type` (uapi perf_event.h) and the user records of tools/lib/perf/include/perf/event.h. */
export const RECORD = {
  MMAP: 1,
  COMM: 3,
  MMAP2: 10,
  AUX: 11,
  ITRACE_START: 12,
  FINISHED_ROUND: 68,
  AUXTRACE_INFO: 70,
  AUXTRACE: 71,
} as const;

/** `perf_event_header.misc` (uapi perf_event.h): the CPU mode of a record's addresses (user). */
export const MISC_USER = 2;

/** `enum perf_event_sample_format` (uapi perf_event.h): what a sample, and with sample_id_all every other record, carries. */
export const SAMPLE = {
  IP: 1n << 0n,
  TID: 1n << 1n,
  TIME: 1n << 2n,
  ID: 1n << 6n,
  CPU: 1n << 7n,
  STREAM_ID: 1n << 9n,
  IDENTIFIER: 1n << 16n,
} as const;

/** The bit-field word of `struct perf_event_attr` after read_format (uapi perf_event.h, in declaration order). */
export const ATTR_FLAG = {
  disabled: 1n << 0n,
  exclude_user: 1n << 4n,
  exclude_kernel: 1n << 5n,
  exclude_hv: 1n << 6n,
  mmap: 1n << 8n,
  comm: 1n << 9n,
  enable_on_exec: 1n << 12n,
  task: 1n << 13n,
  sample_id_all: 1n << 18n,
} as const;

/** `enum auxtrace_type` (tools/perf/util/auxtrace.h): the kind of PERF_RECORD_AUXTRACE_INFO. */
export const PERF_AUXTRACE_INTEL_PT = 1;

/** The other kinds of `enum auxtrace_type` (tools/perf/util/auxtrace.h), by number, for messages. */
export const AUXTRACE_TYPE_NAMES: Readonly<Record<number, string>> = {
  0: 'unknown', 1: 'intel_pt', 2: 'intel_bts', 3: 'cs_etm', 4: 'arm_spe', 5: 's390_cpumsf', 6: 'hisi_ptt',
};

/** `PERF_AUX_FLAG_*` of PERF_RECORD_AUX's `flags` (uapi perf_event.h). */
export const AUX_FLAG = {
  /** "record was truncated to fit": the AUX area was full. */
  TRUNCATED: 0x01n,
  /** "snapshot from overwrite mode". */
  OVERWRITE: 0x02n,
  /** "record contains gaps". */
  PARTIAL: 0x04n,
  /** "sample collided with another". */
  COLLISION: 0x08n,
} as const;

/** The first user record type: records below it are the kernel's and carry sample_id (uapi perf_event.h, tools/lib/perf/include/perf/event.h `PERF_RECORD_USER_TYPE_START`). */
export const PERF_RECORD_USER_TYPE_START = 64;

/** PERF_RECORD_SAMPLE (uapi perf_event.h): its sample_id fields are the sample's own, not a trailer. */
export const PERF_RECORD_SAMPLE = 9;

/** `attr.type` of the generic events (uapi perf_event.h `enum perf_type_id`). */
export const PERF_TYPE = { HARDWARE: 0, SOFTWARE: 1, TRACEPOINT: 2, HW_CACHE: 3, RAW: 4, BREAKPOINT: 5 } as const;

/** sizeof(struct perf_pipe_file_header): magic and size only, the header of `perf record -o -` (tools/perf/util/header.h). */
export const PIPE_HEADER_SIZE = 16;

/** The header feature ids ptlab writes (tools/perf/util/header.h `enum HEADER_…`). */
export const FEATURE = {
  HOSTNAME: 3,
  OSRELEASE: 4,
  VERSION: 5,
  ARCH: 6,
  NRCPUS: 7,
  CPUDESC: 8,
  CPUID: 9,
  EVENT_DESC: 12,
  PMU_MAPPINGS: 16,
} as const;

/** Strings in feature sections are padded to this (tools/perf/util/header.c `NAME_ALIGN`). */
export const NAME_ALIGN = 64;
