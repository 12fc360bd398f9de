// The time of a trace stream as its packets are read: each timing packet goes to the calibration
// first and then to the estimate, PSB+ packets as header packets, as libipt's query decoder and
// ptdump do (libipt/src/pt_query_decoder.c: pt_qry_decode_tsc / pt_qry_header_tsc, _cbr, _tma,
// _mtc, _cyc; ptdump.c track_tsc … track_cyc). `ptlab dump --time` and `ptlab flow --time` read
// their times from here.
import { PacketKind, type PacketRecord } from '../record.js';
import { TimeCalibration } from './calibration.js';
import { TimeEstimator, type TimeConfig } from './estimator.js';

/** ptdump's switches for time: --no-tcal (CYCs are not converted) and --no-cyc (CYCs are ignored). */
export interface PacketClockOptions {
  readonly noTcal?: boolean;
  readonly noCyc?: boolean;
}

/** What a timing packet changed, for ptdump's columns: the time, the calibration, both or neither. */
export const TimeUpdate = { none: 0, time: 1, tcal: 2, both: 3 } as const;

const TSC = PacketKind.tsc, TMA = PacketKind.tma, MTC = PacketKind.mtc, CYC = PacketKind.cyc, CBR = PacketKind.cbr;
const PSB = PacketKind.psb, PSBEND = PacketKind.psbend, OVF = PacketKind.ovf;

/** The estimated TSC and the calibration of one stream, fed packet by packet. */
export class PacketClock {
  readonly time: TimeEstimator;
  readonly tcal: TimeCalibration;
  private inHeader = false;
  private cachedEpoch = -1;
  private cachedHex = '';
  private cachedJson = '';

  constructor(config: TimeConfig, private readonly opts: PacketClockOptions = {}) {
    this.time = new TimeEstimator(config);
    this.tcal = new TimeCalibration(config);
  }

  /** Applies `r` if it concerns time; returns which of ptdump's columns it updates (TimeUpdate). */
  apply(r: PacketRecord): number {
    switch (r.kind) {
      case PSB: this.inHeader = true; return TimeUpdate.none;
      case PSBEND: this.inHeader = false; return TimeUpdate.none;
      case OVF: this.inHeader = false; this.tcal.updateOvf(); return TimeUpdate.none;
      case TSC: {
        const tsc = (r.hi >>> 0) * 2 ** 32 + (r.lo >>> 0);
        if (!this.opts.noTcal) { if (this.inHeader) this.tcal.headerTsc(tsc); else this.tcal.updateTsc(tsc); }
        this.time.onTsc(r.lo, r.hi);
        return TimeUpdate.both;
      }
      case CBR:
        if (!this.opts.noTcal) { if (this.inHeader) this.tcal.headerCbr(r.ratio); else this.tcal.updateCbr(r.ratio); }
        return TimeUpdate.tcal;
      case TMA:
        this.time.onTma(r.ctc, r.fc);
        return TimeUpdate.time;
      case MTC:
        if (!this.opts.noTcal) this.tcal.updateMtc(r.ctc);
        this.time.onMtc(r.ctc);
        return TimeUpdate.both;
      case CYC: {
        if (this.opts.noCyc) return TimeUpdate.none;
        const fcr = this.opts.noTcal ? 0 : this.tcal.fcr();
        if (!this.opts.noTcal) this.tcal.updateCyc(r.lo, r.hi);
        this.time.onCyc(r.lo, r.hi, fcr);
        return TimeUpdate.time;
      }
      default:
        return TimeUpdate.none;
    }
  }

  /** The estimate as ptdump prints it (16 hex digits), or undefined before the first TSC. */
  tscHex(): string | undefined {
    if (!this.time.known) return undefined;
    this.refresh();
    return this.cachedHex;
  }

  /** The estimate as flow-json writes numbers (`0x`, no leading zeros), or undefined before the first TSC. */
  tscJson(): string | undefined {
    if (!this.time.known) return undefined;
    this.refresh();
    return this.cachedJson;
  }

  /** The estimate changes at timing packets only: its texts are made once per change. */
  private refresh(): void {
    if (this.time.epoch === this.cachedEpoch) return;
    this.cachedEpoch = this.time.epoch;
    const hex = this.time.tsc().toString(16);
    this.cachedHex = hex.padStart(16, '0');
    this.cachedJson = `0x${hex}`;
  }
}
