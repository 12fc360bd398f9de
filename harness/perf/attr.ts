// `struct perf_event_attr` (tools/include/uapi/linux/perf_event.h) at PERF_ATTR_SIZE_VER7, the
// 128 bytes perf 6.1 writes into a perf.data's attribute section and its EVENT_DESC feature.
import { LeWriter } from './le-writer.js';
import { ATTR_FLAG, ATTR_SIZE } from './abi.js';

/** The fields of an attr that ptlab sets; every other field is zero. */
export interface PerfAttr {
  readonly type: number;
  readonly config: bigint;
  readonly sampleType: bigint;
  /** The bit-field word (ATTR_FLAG bits). */
  readonly flags: bigint;
}

/** The 128 bytes of `a`, field by field in declaration order (offsets in the comments). */
export function encodeAttr(a: PerfAttr): Uint8Array {
  const w = new LeWriter();
  w.u32(a.type).u32(ATTR_SIZE); //             0 type, 4 size
  w.u64(a.config); //                          8 config
  w.u64(1n); //                                16 sample_period: perf record's 1 for an AUX event
  w.u64(a.sampleType); //                      24 sample_type
  w.u64(0n); //                                32 read_format
  w.u64(a.flags); //                           40 disabled, inherit, … (ATTR_FLAG)
  w.u32(0).u32(0); //                          48 wakeup_events, 52 bp_type
  w.u64(0n).u64(0n); //                        56 config1, 64 config2
  w.u64(0n).u64(0n); //                        72 branch_sample_type, 80 sample_regs_user
  w.u32(0).i32(0); //                          88 sample_stack_user, 92 clockid
  w.u64(0n); //                                96 sample_regs_intr
  w.u32(0).u16(0).u16(0); //                   104 aux_watermark, 108 sample_max_stack, 110 reserved
  w.u32(0).u32(0); //                          112 aux_sample_size, 116 reserved
  w.u64(0n); //                                120 sig_data
  if (w.length !== ATTR_SIZE) throw new RangeError(`perf_event_attr encoded as ${w.length} bytes`);
  return w.bytes();
}

/** The flags of perf record's intel_pt event for a user-only (or kernel-only) trace. */
export function intelPtFlags(traced: { readonly user: boolean; readonly kernel: boolean }): bigint {
  let f = ATTR_FLAG.disabled | ATTR_FLAG.exclude_hv | ATTR_FLAG.mmap | ATTR_FLAG.comm | ATTR_FLAG.enable_on_exec | ATTR_FLAG.task | ATTR_FLAG.sample_id_all;
  if (!traced.user) f |= ATTR_FLAG.exclude_user;
  if (!traced.kernel) f |= ATTR_FLAG.exclude_kernel;
  return f;
}
