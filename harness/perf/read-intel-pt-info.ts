// The private words of an intel_pt PERF_RECORD_AUXTRACE_INFO, read back: the enum of
// tools/perf/util/intel-pt.h (INTEL_PT_PMU_TYPE … INTEL_PT_FILTER_STR_LEN) as
// tools/perf/util/intel-pt.c `intel_pt_process_auxtrace_info()` reads them. A file of an older
// perf has fewer words: the first nine (through INTEL_PT_SNAPSHOT_MODE) are required, the others
// are read only when the record is long enough for them (intel-pt.c `intel_pt_has()`).
import { PerfDataError } from './perf-data-error.js';

/** The word indexes of intel-pt.h's enum. */
const W = {
  PMU_TYPE: 0, TIME_SHIFT: 1, TIME_MULT: 2, TIME_ZERO: 3, CAP_USER_TIME_ZERO: 4, TSC_BIT: 5, NORETCOMP_BIT: 6,
  HAVE_SCHED_SWITCH: 7, SNAPSHOT_MODE: 8, PER_CPU_MMAPS: 9, MTC_BIT: 10, MTC_FREQ_BITS: 11, TSC_CTC_N: 12,
  TSC_CTC_D: 13, CYC_BIT: 14, MAX_NONTURBO_RATIO: 15, FILTER_STR_LEN: 16,
} as const;

/** intel-pt.c: `min_sz = sizeof(u64) * INTEL_PT_PER_CPU_MMAPS`. */
const MIN_WORDS = W.PER_CPU_MMAPS;

/** What an intel_pt session's AUXTRACE_INFO says; a word the file does not have is undefined. */
export interface IntelPtSession {
  readonly pmuType: number;
  readonly time: { readonly shift: number; readonly mult: bigint; readonly zero: bigint; readonly capUserTimeZero: boolean };
  /** The `config` bit masks of the TSC, NoRETComp, MTC, MTC period and CYC fields. */
  readonly bits: { readonly tsc: bigint; readonly noretcomp: bigint; readonly mtc?: bigint; readonly mtcFreq?: bigint; readonly cyc?: bigint };
  readonly haveSchedSwitch: boolean;
  readonly snapshotMode: boolean;
  /** Per-CPU AUX buffers (perf record's default), or one per thread (`--per-thread`); undefined in a file too old to say. */
  readonly perCpuMmaps?: boolean;
  /** CPUID.15H EBX / EAX: TSC ticks per CTC tick. */
  readonly tscCtc?: { readonly n: number; readonly d: number };
  readonly maxNonTurboRatio?: number;
  /** perf's address filter string ('' when none). */
  readonly filter: string;
}

/** The session of the private words `priv` of the record at `at`. */
export function readIntelPtInfo(priv: readonly bigint[], at: number): IntelPtSession {
  if (priv.length < MIN_WORDS) throw new PerfDataError(at, `an intel_pt AUXTRACE_INFO of ${priv.length} private words, fewer than the ${MIN_WORDS} every perf writes`);
  const has = (i: number): boolean => priv.length > i;
  const w = (i: number): bigint => priv[i]!;
  const opt = <T>(i: number, f: (v: bigint) => T): T | undefined => (has(i) ? f(w(i)) : undefined);
  const filterLen = has(W.FILTER_STR_LEN) ? Number(w(W.FILTER_STR_LEN)) : 0;
  let filter = '';
  if (filterLen > 0) {
    const words = priv.slice(W.FILTER_STR_LEN + 1);
    if (words.length * 8 < filterLen + 1) throw new PerfDataError(at, `an intel_pt filter string of ${filterLen} bytes in ${words.length * 8}`);
    const b = Buffer.alloc(words.length * 8);
    words.forEach((v, i) => b.writeBigUInt64LE(v, 8 * i));
    filter = b.subarray(0, filterLen).toString('latin1');
  }
  const mtc = opt(W.MTC_BIT, (v) => v), mtcFreq = opt(W.MTC_FREQ_BITS, (v) => v), cyc = opt(W.CYC_BIT, (v) => v);
  const perCpuMmaps = opt(W.PER_CPU_MMAPS, (v) => v !== 0n);
  const n = opt(W.TSC_CTC_N, Number), d = opt(W.TSC_CTC_D, Number), ratio = opt(W.MAX_NONTURBO_RATIO, Number);
  return {
    pmuType: Number(w(W.PMU_TYPE)),
    time: { shift: Number(w(W.TIME_SHIFT)), mult: w(W.TIME_MULT), zero: w(W.TIME_ZERO), capUserTimeZero: w(W.CAP_USER_TIME_ZERO) !== 0n },
    bits: {
      tsc: w(W.TSC_BIT), noretcomp: w(W.NORETCOMP_BIT),
      ...(mtc === undefined ? {} : { mtc }), ...(mtcFreq === undefined ? {} : { mtcFreq }), ...(cyc === undefined ? {} : { cyc }),
    },
    haveSchedSwitch: w(W.HAVE_SCHED_SWITCH) !== 0n,
    snapshotMode: w(W.SNAPSHOT_MODE) !== 0n,
    ...(perCpuMmaps === undefined ? {} : { perCpuMmaps }),
    ...(n === undefined || d === undefined ? {} : { tscCtc: { n, d } }),
    ...(ratio === undefined ? {} : { maxNonTurboRatio: ratio }),
    filter,
  };
}

/** The MTC period (IA32_RTIT_CTL.MTCFreq) an event's `config` sets, by the session's MTC_FREQ_BITS mask; undefined when the file does not say. */
export function mtcFreqOf(session: IntelPtSession, config: bigint): number | undefined {
  const mask = session.bits.mtcFreq;
  if (mask === undefined || mask === 0n) return undefined;
  let shift = 0n;
  while (((mask >> shift) & 1n) === 0n) shift++;
  return Number((config & mask) >> shift);
}
