// ptdump's time columns (ptdump.c print_time, print_tcal, track_time): with --time, a timing
// packet's line ends in `tsc` and the estimated TSC; with --tcal, in `fcr` and the cycle-to-TSC
// ratio; --time-delta gives either as the change since the last one shown. Where both apply,
// the time is shown, as in ptdump. The estimate is driver/decode/time/ (docs/sdm/packets.md §13.1).
import { PacketClock, TimeUpdate } from '../../driver/decode/time/packet-clock.js';
import { FCR_ONE } from '../../driver/decode/time/estimator.js';
import type { PacketRecord } from '../../driver/decode/record.js';
import type { DecodeConfig } from './decode-config.js';

/** Which columns are asked for. */
export interface TimeColumnOptions {
  readonly time: boolean;
  readonly tcal: boolean;
  readonly delta: boolean;
  readonly noTcal: boolean;
  readonly noCyc: boolean;
}

/** The time-estimation facts of `config` (libipt's defaults: MTCFreq 0, the rest unknown). */
export function timeConfigOf(config: DecodeConfig): ConstructorParameters<typeof PacketClock>[0] {
  return {
    mtcFreq: config.mtcFreq ?? 0,
    ...(config.cpuid15?.eax === undefined ? {} : { cpuid15Eax: config.cpuid15.eax }),
    ...(config.cpuid15?.ebx === undefined ? {} : { cpuid15Ebx: config.cpuid15.ebx }),
    ...(config.nomFreq === undefined ? {} : { nomFreq: config.nomFreq }),
  };
}

/** Feeds every packet to a clock and says what a timing packet's line ends with. */
export class TimeColumn {
  private clock: PacketClock;
  private lastTsc = 0n;
  private lastFcr = 0;

  constructor(private readonly config: DecodeConfig, private readonly opts: TimeColumnOptions) {
    this.clock = this.newClock();
  }

  /** A new stream (the next CPU of a perf.data): time starts over. */
  restart(): void {
    this.clock = this.newClock();
    this.lastTsc = 0n;
    this.lastFcr = 0;
  }

  /** Applies `r`; returns the column for its line (undefined: none). Every packet goes through, shown or not. */
  after(r: PacketRecord): string | undefined {
    const update = this.clock.apply(r);
    if (update === TimeUpdate.none) return undefined;
    if (this.opts.time && (update & TimeUpdate.time) !== 0) return this.timeText();
    if (this.opts.tcal && (update & TimeUpdate.tcal) !== 0) return this.tcalText();
    return undefined;
  }

  private newClock(): PacketClock {
    return new PacketClock(timeConfigOf(this.config), { noTcal: this.opts.noTcal, noCyc: this.opts.noCyc });
  }

  private timeText(): string {
    if (!this.clock.time.known) return 'tsc <unavailable>';
    if (!this.opts.delta) return `tsc ${this.clock.tscHex()!}`;
    const tsc = this.clock.time.tsc(), last = this.lastTsc;
    this.lastTsc = tsc;
    return tsc >= last ? `tsc +${(tsc - last).toString(16)}` : `tsc -${(last - tsc).toString(16)}`;
  }

  private tcalText(): string {
    const fcr = this.clock.tcal.fcr();
    if (fcr === 0) return 'fcr <unavailable>';
    if (!this.opts.delta) return `fcr ${(fcr / FCR_ONE).toFixed(3)}`;
    const last = this.lastFcr;
    this.lastFcr = fcr;
    return fcr >= last ? `fcr +${((fcr - last) / FCR_ONE).toFixed(3)}` : `fcr -${((last - fcr) / FCR_ONE).toFixed(3)}`;
  }
}
