// The loss ledger (docs/design.md "The run directory", losses.json): every byte
// not collected, and why. Nothing is dropped silently.

/** Why bytes are missing from trace.pt. */
export type LossReason = 'stop' | 'wrap' | 'error' | 'ovf';

/**
 * One loss at offset `at` of trace.pt. `bytes` counts bytes the CPU wrote to memory that are not
 * in trace.pt; null when what is missing never reached memory, so the driver cannot count it
 * (an OVF; trace cut off by a ToPA STOP or an operational error).
 */
export interface Loss {
  readonly at: number;
  readonly bytes: number | null;
  readonly reason: LossReason;
}

/** losses.json. */
export interface LossLedger {
  /** Bytes the CPU wrote to memory (sim only). */
  readonly written?: number;
  readonly collected: number;
  /** Bytes dropped inside the CPU (sim only; OVF). */
  readonly dropped?: number;
  readonly lost: readonly Loss[];
}

/** Collects losses while a run goes on. */
export class LossRecorder {
  private readonly items: Loss[] = [];

  /** Records a loss. */
  add(at: number, bytes: number | null, reason: LossReason): void {
    this.items.push({ at, bytes, reason });
  }

  /** Every loss so far, ordered by offset (stable). */
  get lost(): readonly Loss[] {
    return [...this.items].sort((x, y) => x.at - y.at);
  }

  /** The ledger for `collected` bytes; `written`/`dropped` when the target knows them (sim). */
  ledger(collected: number, target: { written?: number; dropped?: number } = {}): LossLedger {
    // An unknown count stays undefined, which JSON leaves out.
    return { written: target.written, collected, dropped: target.dropped, lost: this.lost };
  }
}

/** Σ lost.bytes over the counted (non-null) entries: stop, wrap and error. */
export function lostBytes(l: LossLedger): number {
  return l.lost.reduce((s, x) => s + (x.bytes ?? 0), 0);
}

/** written − (collected + Σ lost.bytes): 0 when the ledger balances; undefined without `written`. */
export function imbalance(l: LossLedger): number | undefined {
  return l.written === undefined ? undefined : l.written - (l.collected + lostBytes(l));
}

/** A run is lossless when nothing is in `lost` (which includes every OVF in the stream). */
export function isLossless(l: LossLedger): boolean {
  return l.lost.length === 0;
}
