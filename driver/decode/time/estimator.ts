// Time estimation from the timing packets (docs/sdm/packets.md §13, §13.1): TSC gives the time
// exactly, TMA aligns it with the crystal clock (ART), each MTC advances it by the ART ticks since
// the previous one, and CYC by core cycles converted at the calibrated ratio (calibration.ts).
// The rules are libipt's (libipt/src/pt_time.c: pt_time_update_tsc, _tma, _mtc, _cyc and
// pt_time_adjust_cyc), written here in our own words.
//
// The estimate is a TSC value: the 56-bit TSC of the last TSC packet (`tscBase`, a bigint, set
// rarely) plus an offset in TSC ticks (`base + fc`, plain numbers, changed on every packet).

/** CPU facts time estimation needs: libipt's pt_config mtc_freq, nom_freq, cpuid_0x15_eax/ebx. */
export interface TimeConfig {
  /** IA32_RTIT_CTL.MTCFreq (0–15): an MTC carries ART[MTCFreq+7:MTCFreq]. */
  readonly mtcFreq: number;
  /** CPUID.15H:EAX and :EBX, the TSC/ART ratio EBX/EAX; MTCs are ignored (counted lost) without both. */
  readonly cpuid15Eax?: number;
  readonly cpuid15Ebx?: number;
  /** The maximum non-turbo ratio P1 (MSR_PLATFORM_INFO[15:8]): with a CBR, the first cycle-to-TSC ratio (calibration.ts). */
  readonly nomFreq?: number;
}

/** An MTC carries 8 bits of CTC (§3.9), a TMA 16 (§3.10). */
const MTC_CTC_BITS = 8;
const TMA_CTC_BITS = 16;
const TMA_CTC_MASK = (1 << TMA_CTC_BITS) - 1;
/** The fixed point of a cycle-to-TSC ratio (libipt's pt_tcal_fcr_shr): the ratio × 2^8. */
export const FCR_ONE = 2 ** 8;

/** The running time estimate of one trace stream. */
export class TimeEstimator {
  /** A TSC packet has been seen: the estimate is a time (libipt's have_tsc). */
  private haveTsc = false;
  /** The TMA after that TSC has been seen. */
  private haveTma = false;
  /** The CTC of an MTC (or of a TMA that holds every bit an MTC gives) is known. */
  private haveMtc = false;
  /** TSC[55:0] of the last TSC packet. */
  private tscBase = 0n;
  /** libipt's `base`: the time of the last MTC (or TSC), in TSC ticks after `tscBase`. */
  private base = 0;
  /** TSC ticks since `base`: the TMA's FastCounter, then what CYCs add. */
  private fc = 0;
  /** CTC of the last MTC or TMA, and of the MTC period the next CYC counts from. */
  private ctc = 0;
  private ctcCyc = 0;
  /** MTCs whose CTC could not be placed, and CYCs that could not be converted, since the last TSC. */
  lostMtc = 0;
  lostCyc = 0;
  /** Bumped whenever the estimate changes: a cache key for whoever formats it. */
  epoch = 0;

  constructor(private readonly config: TimeConfig) {}

  /** Whether a TSC packet has been seen, so that `tsc()` is a time. */
  get known(): boolean {
    return this.haveTsc;
  }

  /** The estimate, TSC ticks. */
  tsc(): bigint {
    return this.tscBase + BigInt(this.base + this.fc);
  }

  /** TSC packet (§3.8): the full time; losses before it no longer count. */
  onTsc(lo: number, hi: number): void {
    this.tscBase = (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
    this.haveTsc = true; this.haveTma = false; this.haveMtc = false;
    this.base = 0; this.fc = 0; this.ctc = 0;
    this.lostMtc = 0; this.lostCyc = 0;
    this.epoch++;
  }

  /**
   * TMA (§3.10): the TSC came FastCounter ticks after the ART edge CTC, so the time of that edge
   * is the base the next MTC counts from. A TMA without its TSC, or a second one, is ignored.
   */
  onTma(ctc: number, fastCounter: number): void {
    if (!this.haveTsc || this.haveTma || this.haveMtc) return;
    this.haveTma = true;
    this.base -= fastCounter;
    this.fc += fastCounter;
    // When MTC's bits all lie within the TMA's 16, the TMA stands for an MTC (pt_time_update_tma).
    if (this.config.mtcFreq + MTC_CTC_BITS <= TMA_CTC_BITS) this.haveMtc = true;
    this.ctc = this.ctcCyc = ctc & this.ctcMask();
  }

  /** MTC (§3.9): the time moves to this ART edge, `payload << MTCFreq`. */
  onMtc(payload: number): void {
    if (this.haveTsc && !this.haveTma) return;   // between a TSC and its TMA: the TMA will place it
    const hadMtc = this.haveMtc;
    let last = this.ctc;
    const ctc = (payload << this.config.mtcFreq) >>> 0;
    if (this.fc !== 0 || this.lostCyc !== 0 || !hadMtc) this.ctcCyc = ctc;
    this.haveMtc = true; this.fc = 0; this.ctc = ctc; this.lostCyc = 0;
    this.epoch++;
    if (!hadMtc) {
      if (!this.haveTma) return;   // where in its period tracing began is unknown: this MTC only starts the count
      last = this.withMtcHighBits(last, ctc);
    }
    const delta = this.ctcDelta(ctc, last);
    const ticks = delta === undefined ? undefined : this.artToTsc(delta);
    if (ticks === undefined) { this.lostMtc++; return; }
    this.base += ticks;
  }

  /**
   * CYC (§3.11): core cycles since the previous CYC, at `fcr` / 2^8 TSC ticks each (the
   * calibration's ratio); without a ratio (`fcr` 0) the CYC is counted lost.
   */
  onCyc(lo: number, hi: number, fcr: number): void {
    if (fcr === 0) { this.lostCyc++; return; }
    let cycles = (hi >>> 0) * 2 ** 32 + (lo >>> 0);
    if (this.fc === 0) cycles = this.currentPeriodCycles(cycles, fcr);
    this.fc += Math.floor((cycles * fcr) / FCR_ONE);
    this.epoch++;
  }

  /** The CTC bits an MTC can say: MTCFreq + 8 of them. */
  private ctcMask(): number {
    return ctcMask(this.config.mtcFreq);
  }

  /**
   * The TMA's CTC with the bits above its 16 taken from the first MTC after it (the TMA had too few
   * bits to stand for an MTC); one period back when the MTC's low bits show the TMA came later.
   */
  private withMtcHighBits(tmaCtc: number, mtcCtc: number): number {
    let high = mtcCtc - (mtcCtc & TMA_CTC_MASK);
    if ((mtcCtc & TMA_CTC_MASK) < tmaCtc) high = (high - 2 ** TMA_CTC_BITS) & (0xff * 2 ** this.config.mtcFreq);
    return tmaCtc + high;
  }

  private ctcDelta(ctc: number, last: number): number | undefined {
    return ctcDelta(ctc, last, this.config.mtcFreq);
  }

  private artToTsc(art: number): number | undefined {
    return artToTsc(art, this.config);
  }

  /**
   * The first CYC after an MTC may count cycles of the periods before it: take off what those
   * periods hold at the current ratio (pt_time_adjust_cyc), never going below zero.
   */
  private currentPeriodCycles(cycles: number, fcr: number): number {
    if (this.ctc === this.ctcCyc) return cycles;
    const delta = this.ctcDelta(this.ctc, this.ctcCyc);
    const ticks = delta === undefined ? undefined : this.artToTsc(delta);
    if (ticks === undefined) return cycles;
    const earlier = Math.floor((ticks * FCR_ONE) / fcr);
    return Math.max(0, cycles - earlier);
  }
}

/** The CTC bits an MTC can say at `mtcFreq`: MTCFreq + 8 of them. */
function ctcMask(mtcFreq: number): number {
  return 2 ** (mtcFreq + MTC_CTC_BITS) - 1;
}

/** ART ticks from `last` to `ctc`, one wrap of the MTC's CTC allowed (pt_time_ctc_delta). */
export function ctcDelta(ctc: number, last: number, mtcFreq: number): number | undefined {
  if (ctc >= last) return ctc - last;
  const wrapped = ctc + ctcMask(mtcFreq) + 1;
  return wrapped >= last ? wrapped - last : undefined;
}

/** ART ticks as TSC ticks: × CPUID.15H EBX/EAX (pt_time_ctc_fc); undefined without the ratio. */
export function artToTsc(art: number, config: TimeConfig): number | undefined {
  const eax = config.cpuid15Eax ?? 0, ebx = config.cpuid15Ebx ?? 0;
  if (eax === 0 || ebx === 0) return undefined;
  return Math.floor((art * ebx) / eax);
}
