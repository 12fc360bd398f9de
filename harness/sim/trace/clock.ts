// The deterministic modelled clock behind TSC, MTC, TMA, CYC and CBR
// (docs/sdm/packets.md §3.7–§3.11, §13). Core cycles advance per instruction and
// per branch; TSC = tscStart + floor(cycles · P1 / CBR) (TSC runs at the
// P1 rate, the core at CBR); ART = floor(TSC · den / num), where num/den is
// the TSC/ART ratio of CPUID.15H (EBX/EAX).

/** Parameters of the modelled clock. All integers. */
export interface ClockConfig {
  /** Core cycles charged per non-branch instruction. */
  readonly cyclesPerInstruction: number;
  /** Core cycles charged per branch or event. */
  readonly cyclesPerBranch: number;
  /** Core:bus ratio written in CBR packets. */
  readonly cbr: number;
  /** Maximum non-turbo ratio (MSR 0xCE[15:8]); TSC ticks per core cycle = p1 / cbr. */
  readonly p1: number;
  /** CPUID.15H:EBX (TSC/ART numerator). */
  readonly tscArtNum: number;
  /** CPUID.15H:EAX (TSC/ART denominator). */
  readonly tscArtDen: number;
  /** TSC value at cycle 0. */
  readonly tscStart: number;
}

/** Defaults: 1 cycle per instruction, 2 per branch, core at P1 = 32, TSC/ART = 2. */
export const DEFAULT_CLOCK: ClockConfig = {
  cyclesPerInstruction: 1, cyclesPerBranch: 2, cbr: 32, p1: 32, tscArtNum: 2, tscArtDen: 1, tscStart: 0,
};

/** Conversions between core cycles, TSC and ART for one clock configuration. */
export class ModelClock {
  readonly cfg: ClockConfig;
  constructor(cfg: Partial<ClockConfig> = {}) {
    this.cfg = { ...DEFAULT_CLOCK, ...cfg };
    const c = this.cfg;
    for (const [k, v] of Object.entries(c)) {
      if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`clock: ${k} must be a non-negative integer`);
    }
    if (c.cbr === 0 || c.p1 === 0 || c.tscArtNum === 0 || c.tscArtDen === 0) throw new RangeError('clock: ratios must be non-zero');
  }

  /** TSC at core cycle `cycles`. */
  tsc(cycles: number): number {
    return this.cfg.tscStart + Math.floor((cycles * this.cfg.p1) / this.cfg.cbr);
  }

  /** ART (crystal clock) at core cycle `cycles`. */
  art(cycles: number): number {
    return Math.floor((this.tsc(cycles) * this.cfg.tscArtDen) / this.cfg.tscArtNum);
  }

  /** TMA FastCounter: TSC ticks since the last ART edge, 9 bits (docs/sdm/packets.md §3.10). */
  fastCounter(cycles: number): number {
    const t = this.tsc(cycles);
    const artEdgeTsc = Math.ceil((this.art(cycles) * this.cfg.tscArtNum) / this.cfg.tscArtDen);
    return (t - artEdgeTsc) & 0x1ff;
  }

  /** The first core cycle after `cycles` at which ART bit `n` toggles (the next MTC, docs/sdm/msrs.md §3.2 MTCFreq). */
  nextMtcCycle(cycles: number, n: number): number {
    const period = 2 ** n;
    const boundary = (Math.floor(this.art(cycles) / period) + 1) * period;
    // Invert art() approximately, then step to the exact first cycle.
    const tscNeeded = Math.ceil((boundary * this.cfg.tscArtNum) / this.cfg.tscArtDen);
    let c = Math.max(cycles + 1, Math.ceil(((tscNeeded - this.cfg.tscStart) * this.cfg.cbr) / this.cfg.p1) - 1);
    while (this.art(c) < boundary) c++;
    while (c - 1 > cycles && this.art(c - 1) >= boundary) c--;
    return c;
  }
}
