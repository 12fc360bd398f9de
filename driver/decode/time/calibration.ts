// Time calibration: how many TSC ticks one core cycle takes (the ratio CYC packets are converted
// with, docs/sdm/packets.md §13). P1/CBR gives it when P1 is known (a CBR in PSB+); two MTCs with
// CYCs between them measure it, and so do two PSB+ TSCs when there are no MTCs. The rules are
// libipt's (libipt/src/pt_time.c: pt_tcal_header_tsc, _update_tsc, _header_cbr, _update_cbr,
// _update_mtc, _update_cyc, _update_ovf), written in our own words; libipt's workaround for
// erratum SKL168 (a CYC dropped before a PSB) is not applied (driver/hw/errata.ts names it).
import { artToTsc, ctcDelta, FCR_ONE, type TimeConfig } from './estimator.js';

/** TSC values are 56 bits (§3.8): one wrap between two TSC packets is corrected. */
const TSC_WRAP = 2 ** 56;

/** The cycle-to-TSC ratio of one trace stream, fixed point × 2^8 (libipt's fcr). */
export class TimeCalibration {
  private ratio = 0;
  /** The lowest and highest ratio ever set: none was while min > max. */
  private min = Infinity;
  private max = 0;
  /** The last TSC packet's value (0: none) and the cycles counted since. */
  private lastTsc = 0;
  private cyclesSinceTsc = 0;
  /** The last MTC's CTC and the cycles counted since (`haveMtc`: there was one). */
  private haveMtc = false;
  private ctc = 0;
  private cyclesSinceMtc = 0;

  constructor(private readonly config: TimeConfig) {}

  /** The ratio, fixed point × 2^8; 0 while none is known (CYCs then count as lost). */
  fcr(): number {
    return this.min <= this.max ? this.ratio : 0;
  }

  /** A TSC outside PSB+ may follow lost time: it only restarts the TSC-to-TSC count. */
  updateTsc(tsc: number): void {
    this.lastTsc = tsc;
    this.cyclesSinceTsc = 0;
  }

  /** A TSC in PSB+: with cycles counted since the previous one, and no MTC to do better, measures the ratio. */
  headerTsc(tsc: number): void {
    const last = this.lastTsc, cycles = this.cyclesSinceTsc;
    this.updateTsc(tsc);
    if (last === 0 || cycles === 0 || this.haveMtc) return;
    const delta = tsc >= last ? tsc - last : tsc + TSC_WRAP - last;
    if (delta < 0) return;
    this.set(Math.floor((delta * FCR_ONE) / cycles));
  }

  /** A CBR in PSB+: with P1 known, the ratio is P1/CBR. */
  headerCbr(ratio: number): void {
    const p1 = this.config.nomFreq ?? 0;
    if (p1 === 0 || ratio === 0) return;
    this.set(Math.floor((p1 * FCR_ONE) / ratio));
  }

  /** A CBR outside PSB+ is a frequency change: what was measured no longer holds. */
  updateCbr(ratio: number): void {
    this.reset();
    this.headerCbr(ratio);
  }

  /** MTC: the ART ticks since the previous MTC over the cycles counted between them. */
  updateMtc(payload: number): void {
    const ctc = (payload << this.config.mtcFreq) >>> 0;
    if (!this.haveMtc) { this.haveMtc = true; this.ctc = ctc; this.cyclesSinceMtc = 0; return; }
    const cycles = this.cyclesSinceMtc;
    if (cycles === 0) return;   // no cycles yet: the next MTC measures the longer period
    const last = this.ctc;
    this.ctc = ctc;
    this.cyclesSinceMtc = 0;
    const delta = ctcDelta(ctc, last, this.config.mtcFreq);
    const ticks = delta === undefined ? undefined : artToTsc(delta, this.config);
    if (ticks === undefined) return;
    this.set(Math.floor((ticks * FCR_ONE) / cycles));
  }

  /** CYC: the cycles count towards the next measurement. */
  updateCyc(lo: number, hi: number): void {
    const cycles = (hi >>> 0) * 2 ** 32 + (lo >>> 0);
    this.cyclesSinceMtc += cycles;
    this.cyclesSinceTsc += cycles;
  }

  /** OVF: the counts are broken; a ratio already known is kept (pt_tcal_update_ovf). */
  updateOvf(): void {
    this.lastTsc = 0;
    this.cyclesSinceTsc = 0;
    this.cyclesSinceMtc = 0;
    this.ctc = 0;
    this.haveMtc = false;
  }

  private set(fcr: number): void {
    this.ratio = fcr;
    if (fcr < this.min) this.min = fcr;
    if (fcr > this.max) this.max = fcr;
  }

  private reset(): void {
    this.ratio = 0; this.min = Infinity; this.max = 0;
    this.lastTsc = 0; this.cyclesSinceTsc = 0;
    this.haveMtc = false; this.ctc = 0; this.cyclesSinceMtc = 0;
  }
}
