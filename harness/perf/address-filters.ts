// The run's IP filtering (IA32_RTIT_CTL.ADDRn_CFG with IA32_RTIT_ADDRn_A/B; SDM Vol. 3C
// "IA32_RTIT_CTL MSR", "IA32_RTIT_ADDRn_A and IA32_RTIT_ADDRn_B MSRs") as perf's address-filter
// string, which perf keeps in the AUXTRACE_INFO after INTEL_PT_FILTER_STR_LEN. perf's decoder
// needs it to know that a *direct* branch into a TraceStop region, or out of every FilterEn
// region, is where a TIP.PGD binds: tools/perf/util/intel-pt.c `intel_pt_match_pgd_ip()`, used as
// the decoder's `pgd_ip` only when filters exist. Without it perf walks on to the next indirect
// branch (intel-pt-decoder.c `intel_pt_walk_tip()`).
//
// The syntax is that of `perf record --filter` as tools/perf/util/auxtrace.c
// `addr_filters__parse_bare_filter()` reads it: `ACTION START/SIZE@FILE`, comma separated, where
// START is the offset in FILE (the MMAP's file offset of the address, here address - base).
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';

/** One enabled range n: ADDRn_CFG (1 FilterEn, 2 TraceStop) and its inclusive bounds. */
export interface AddressRange {
  readonly n: number;
  readonly cfg: number;
  readonly a: bigint;
  readonly b: bigint;
}

/** The ADDRn_CFG field of each range, by n (IA32_RTIT_CTL bits 35:32, 39:36, 43:40, 47:44). */
export function rangeConfigs(ctl: bigint): readonly number[] {
  const f = IA32_RTIT_CTL.decode(ctl);
  return [f.ADDR0_CFG, f.ADDR1_CFG, f.ADDR2_CFG, f.ADDR3_CFG];
}

/**
 * perf's filter string for `ranges` in the image `[base, base + size)` mapped from `file`: a range
 * within the image is written against the file; one outside it without a file (perf then matches
 * it to no user address, yet a FilterEn range there still means "a filter exists"). '' with none.
 */
export function perfFilterString(ranges: readonly AddressRange[], image: { base: bigint; size: bigint; file: string }): string {
  const parts: string[] = [];
  for (const r of ranges) {
    const action = r.cfg === 1 ? 'filter' : r.cfg === 2 ? 'tracestop' : undefined;
    if (action === undefined || r.b < r.a) continue;
    const end = r.b + 1n;
    const lo = r.a > image.base ? r.a : image.base;
    const hi = end < image.base + image.size ? end : image.base + image.size;
    parts.push(lo < hi
      ? `${action} 0x${(lo - image.base).toString(16)}/0x${(hi - lo).toString(16)}@${image.file}`
      : `${action} 0x${r.a.toString(16)}/0x${(end - r.a).toString(16)}`);
  }
  return parts.join(',');
}
