// The driver's trace session inside a sequence (docs/formats/seq.md "trace", "handle-pmi"): `trace`
// opens a TraceSession (probe, checkRequest, the policy's ToPA tables) and runs its enable
// sequence; `handle-pmi` hands the PMI the last `wait-pmi` met to the driver's own handler
// (driver/pmi/handler.ts, through TraceSession.onEvent) and judges what it did; `collect` is the
// driver's stop and collection (disable, a pending PMI settled, the stream stitched with its loss
// ledger), which ends the session.
import type { Loss } from '../../driver/collect/ledger.js';
import type { PmiEvent, PmiRecord } from '../../driver/pmi/handler.js';
import { TraceSession } from '../../driver/session.js';
import type { Target } from '../../driver/target.js';
import type { Teardown } from '../../driver/teardown.js';
import type { Judged } from './judge.js';
import type { HandleExpect, Step } from './model.js';

/** What the driver's collection gave. */
export interface DriverCollected {
  readonly bytes: Uint8Array;
  readonly lost: readonly Loss[];
  readonly how: string;
}

/** One trace session of a sequence. */
export class SeqTrace {
  private constructor(private readonly session: TraceSession, readonly step: Extract<Step, { kind: 'trace' }>) {}

  /** Opens the session of `s` on `t` and enables tracing (TraceSession.open, then start). */
  static async open(t: Target, s: Extract<Step, { kind: 'trace' }>): Promise<SeqTrace> {
    const session = await TraceSession.open(t, s.request, { cpu: s.cpu });
    try {
      await session.start();
    } catch (e) {
      await session.release();
      throw e;
    }
    return new SeqTrace(session, s);
  }

  /** The driver's handler for `ev` (TraceSession.onEvent: PmiHandler.handle); its record. */
  async handle(ev: PmiEvent): Promise<PmiRecord> {
    await this.session.onEvent(ev);
    return this.session.pmis[this.session.pmis.length - 1]!;
  }

  /** The disable sequence, a pending PMI settled, the stream stitched (TraceSession.stop); the regions are freed after. */
  async collect(): Promise<DriverCollected> {
    try {
      const r = await this.session.stop();
      const lost = r.ledger.lost;
      const losses = lost.length === 0 ? 'nothing lost' : `lost: ${lost.map((l) => `${l.reason} at ${l.at}${l.bytes === null ? '' : ` (${l.bytes} bytes)`}`).join(', ')}`;
      const handled = r.pmis.filter((p) => p.action === 'handled').length;
      return { bytes: r.stream, lost, how: `the driver's collection (ToPA ${this.step.request.output.policy}, ${handled} PMI(s) handled): ${r.stream.length} bytes, ${losses}` };
    } finally {
      await this.session.release();
    }
  }

  /**
   * Ends the session without collecting (the sequence ended first, or failed): TraceEn=0 written
   * and read back, then the regions freed — or, when the target cannot confirm it, left allocated
   * (TraceSession.release).
   */
  async abandon(): Promise<Teardown> {
    return this.session.release();
  }
}

/** A handler record against what `handle-pmi` expects. */
export function judgeHandled(r: PmiRecord, e: HandleExpect): Judged {
  const ok = r.action === e.action && (e.branch === undefined || r.branch === e.branch);
  const want = `action ${e.action}${e.branch === undefined ? '' : `, branch ${e.branch}`}`;
  const got = `action ${r.action}${r.branch === undefined ? '' : `, branch ${r.branch}`}`;
  const st = r.status === undefined ? '' : `, STATUS 0x${r.status.toString(16)}`;
  return { what: e.branch === undefined ? e.action : `${e.action} ${e.branch}`, ok, detail: `expected ${want}; the handler took ${got}${st}${r.stopped ? ' (a ToPA STOP had cut the trace)' : ''}, ${r.roundTrips} target call(s)` };
}

