// What perf's Intel PT decoder is told about a trace: the intel_pt event's `config` (the
// IA32_RTIT_CTL bits the kernel's PMU exposes) and the private words of PERF_RECORD_AUXTRACE_INFO
// that tools/perf/util/intel-pt.c `intel_pt_process_auxtrace_info()` reads, in the order of the
// enum in tools/perf/util/intel-pt.h (INTEL_PT_PMU_TYPE … INTEL_PT_FILTER_STR_LEN).
import { fieldMask } from '../../driver/hw/field.js';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import type { TraceTiming } from '../rundir/interop.js';

/**
 * The PMU format attributes of arch/x86/events/intel/pt.c (`PMU_FORMAT_ATTR(pt, "config:0")` …):
 * perf's `config` bit for each IA32_RTIT_CTL field it exposes, at the field's own bit position.
 * `pt` (config:0) sits where TraceEn does. OS and User are not config bits (attr.exclude_kernel and
 * exclude_user say them), nor are ToPA, the ADDRn_CFG filters (perf's filter string) or FabricEn.
 */
const PMU_FORMAT_FIELDS = [
  'TraceEn', 'CYCEn', 'PwrEvtEn', 'FUPonPTW', 'MTCEn', 'TSCEn', 'DisRETC', 'PTWEn', 'BranchEn',
  'MTCFreq', 'CycThresh', 'PSBFreq', 'EventEn', 'DisTNT',
] as const;

/** A config bit mask of one field (perf record: `perf_pmu__format_bits(…, "tsc")`). */
function bitsOf(field: (typeof PMU_FORMAT_FIELDS)[number]): bigint {
  return fieldMask(IA32_RTIT_CTL.fields[field]);
}

/** Every config bit the PMU exposes. */
const PMU_FORMAT_MASK = PMU_FORMAT_FIELDS.reduce((m, f) => m | bitsOf(f), 0n);

/** The `config` of an intel_pt event that programs IA32_RTIT_CTL as `ctl` did. */
export function intelPtConfig(ctl: bigint): bigint {
  return ctl & PMU_FORMAT_MASK;
}

/** perf's time conversion (`struct perf_tsc_conversion`, tools/perf/util/tsc.h): ns = (tsc × mult) >> shift, + zero. */
export interface TimeConversion {
  readonly shift: number;
  readonly mult: bigint;
  readonly zero: bigint;
}

/**
 * mult and shift for a TSC of `hz`, as the kernel's cyc2ns keeps them: the largest shift up to 31
 * whose mult still fits in 32 bits.
 */
export function timeConversion(hz: number): TimeConversion {
  for (let shift = 31; shift > 0; shift--) {
    const mult = (10n ** 9n << BigInt(shift)) / BigInt(hz);
    if (mult < 1n << 32n) return { shift, mult, zero: 0n };
  }
  return { shift: 0, mult: 10n ** 9n / BigInt(hz), zero: 0n };
}

/** What the private words say, before encoding. */
export interface IntelPtInfo {
  readonly pmuType: number;
  readonly time: TimeConversion;
  readonly config: bigint;
  /** CPUID.15H EBX (numerator) and EAX (denominator): TSC ticks per CTC (ART) tick. */
  readonly tscCtc: { readonly n: number; readonly d: number };
  /** MSR_PLATFORM_INFO[15:8]; 0 when the run does not know it. */
  readonly maxNonTurboRatio: number;
  /** perf's address-filter string of the run's ranges (address-filters.ts); '' for none. */
  readonly filter: string;
}

/**
 * The intel_pt private words, INTEL_PT_PMU_TYPE through INTEL_PT_FILTER_STR_LEN (17 words), then
 * the filter string, NUL-terminated and padded to 8 bytes, when there is one. CAP_USER_TIME_ZERO is 0: the model's TSC is no clock perf can map its own
 * timestamps to, so perf decodes the trace timeless (intel-pt.c `intel_pt_timeless_decoding()`)
 * and still walks every TSC, MTC and CYC packet. Per-CPU mmaps is 0: one trace of one task,
 * as `perf record --per-thread` leaves it. No sched_switch sideband, no snapshot mode.
 */
export function intelPtPrivWords(info: IntelPtInfo): bigint[] {
  return [
    BigInt(info.pmuType), // INTEL_PT_PMU_TYPE
    BigInt(info.time.shift), // INTEL_PT_TIME_SHIFT
    info.time.mult, // INTEL_PT_TIME_MULT
    info.time.zero, // INTEL_PT_TIME_ZERO
    0n, // INTEL_PT_CAP_USER_TIME_ZERO
    bitsOf('TSCEn'), // INTEL_PT_TSC_BIT
    bitsOf('DisRETC'), // INTEL_PT_NORETCOMP_BIT
    0n, // INTEL_PT_HAVE_SCHED_SWITCH
    0n, // INTEL_PT_SNAPSHOT_MODE
    0n, // INTEL_PT_PER_CPU_MMAPS
    bitsOf('MTCEn'), // INTEL_PT_MTC_BIT
    bitsOf('MTCFreq'), // INTEL_PT_MTC_FREQ_BITS
    BigInt(info.tscCtc.n), // INTEL_PT_TSC_CTC_N
    BigInt(info.tscCtc.d), // INTEL_PT_TSC_CTC_D
    bitsOf('CYCEn'), // INTEL_PT_CYC_BIT
    BigInt(info.maxNonTurboRatio), // INTEL_PT_MAX_NONTURBO_RATIO
    BigInt(info.filter.length), // INTEL_PT_FILTER_STR_LEN: the string's length without its NUL
    ...stringWords(info.filter),
  ];
}

/** `s` with a NUL, zero-padded to whole u64 words (intel-pt.c reads `roundup(len + 1, 8)` bytes); none for ''. */
function stringWords(s: string): bigint[] {
  if (s === '') return [];
  const b = Buffer.alloc(Math.ceil((Buffer.byteLength(s, 'latin1') + 1) / 8) * 8);
  b.write(s, 'latin1');
  return Array.from({ length: b.length / 8 }, (_, i) => b.readBigUInt64LE(8 * i));
}

/**
 * The intel_pt description of a run from image.json's timing. The TSC frequency is taken to be the
 * maximum non-turbo ratio × 100 MHz, the relation perf itself assumes ("Maximum non-turbo ratio is
 * TSC freq / 100 MHz", intel-pt.c); without a ratio, 1 GHz.
 */
export function intelPtInfoOf(ctl: bigint, timing: TraceTiming, pmuType: number, filter = ''): IntelPtInfo {
  const ratio = timing.nomFreq ?? 0;
  const c15 = timing.cpuid15;
  return {
    pmuType,
    time: timeConversion((ratio || 10) * 100_000_000),
    config: intelPtConfig(ctl),
    tscCtc: c15 && c15.eax !== 0 && c15.ebx !== 0 ? { n: c15.ebx, d: c15.eax } : { n: 0, d: 0 },
    maxNonTurboRatio: ratio,
    filter,
  };
}
