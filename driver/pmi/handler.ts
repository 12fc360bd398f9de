// The ToPA PMI handler of docs/sdm/output.md §7.1/§7.2 as named steps (Linux
// `intel_pt_interrupt`): stop → read pointers → status → consume/refill
// → fix Stopped/Error → clear PendTopaPMI → ack GLOBAL_STATUS[55] → unmask the
// LVT → restore CTL. MSR accesses go in as few batches as the order allows.
import type { LossRecorder } from '../collect/ledger.js';
import { withoutTraceEn } from '../ctl.js';
import { NO_FAULTS, type DriverFaults } from '../faults.js';
import {
  IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE,
  IA32_RTIT_OUTPUT_MASK_PTRS, IA32_RTIT_STATUS, TRACE_TOPA_PMI,
} from '../hw/msrs.js';
import { rd, wr, type StepOp, type TargetIo } from '../io.js';
import type { HwPointers, OutputPlan, PointerInfo, PointerUpdate } from '../output/plan.js';
import type { TargetEvent } from '../target.js';
import { openWindow, type TraceOffMeter, type TraceOffWindow } from './window.js';

/** The saved PT state of a switched-out context that a PMI handler may edit (context-switch.ts). */
export interface PtImage {
  readonly ctl: bigint;
  outputBase: bigint;
  maskPtrs: bigint;
  status: bigint;
}

/** A `pmi` event of the target. */
export type PmiEvent = Extract<TargetEvent, { kind: 'pmi' }>;

/** What the handler did with one PMI. */
export type PmiAction =
  /** GLOBAL_STATUS[55] was clear: not a ToPA PMI, left to other handlers. */
  | 'not-topa'
  /** TraceEn=0 with InjectPsbPmiOnEnable=1: acknowledged, PendTopaPMI left at 1 (docs/sdm/output.md §7.4 rule 1). */
  | 'ignored-preserved'
  /** Handled: consumed, refilled, tracing restored (if it was on). */
  | 'handled'
  /** Handled for a switched-out context, on its saved image (PmiHandler.handleSaved). */
  | 'handled-saved'
  /**
   * Found at the final stop: an INT region filled just before TraceEn was cleared, so the PMI
   * (or its PendTopaPMI) was still pending. Its bytes are collected with the rest; the handler
   * cleared PendTopaPMI and acknowledged GLOBAL_STATUS[55] so nothing is left for the next user.
   */
  | 'final-stop';

/** One PMI, for result.json figures and the report. */
export interface PmiRecord {
  readonly action: PmiAction;
  /** Target calls (MSR batches, memory, LVT) the handler made, and the MSR batches among them. */
  readonly roundTrips: number;
  readonly batches: number;
  /** STATUS as read after the stop (undefined when not handled). */
  readonly status?: bigint;
  /** A ToPA STOP had cut the trace; an operational error had stopped it. */
  readonly stopped: boolean;
  readonly error: boolean;
  /** Stream offset up to which output was accounted for. */
  readonly at: number;
  readonly window?: TraceOffWindow;
  /** The branch of the PMI algorithm the refill took (docs/sdm/output.md §7.1), when it made one. */
  readonly branch?: string;
  /** The loaded context's part of an interrupt that a switched-out context's filled INT region raised too (§4.5). */
  readonly merged?: true;
}

const STATUS = IA32_RTIT_STATUS;
const ACK = (acked: boolean): StepOp[] => acked ? [] : [wr(IA32_PERF_GLOBAL_STATUS_RESET.address, TRACE_TOPA_PMI, 'ack GLOBAL_STATUS[55]')];

/** The driver's ToPA PMI handler for one output plan. */
export class PmiHandler {

  constructor(
    private readonly io: TargetIo,
    private readonly plan: OutputPlan,
    private readonly losses: LossRecorder,
    private readonly meter?: TraceOffMeter,
    private readonly faults: DriverFaults = NO_FAULTS,
  ) {}

  /** Runs the handler for `ev` (what the target's top half saw and did). */
  async handle(ev: PmiEvent): Promise<PmiRecord> {
    return (await this.run(ev, false))!;
  }

  /**
   * The handler for a ToPA PMI that was (also) another context's: one interrupt may stand for
   * several filled INT regions (a second PMI merges into a pending one: docs/sdm/output.md §4.5).
   * Tracing is stopped and the pointers read as usual; when no INT region of this plan has filled
   * (and the CPU neither stopped nor failed), CTL is restored and undefined returned, with nothing
   * refilled or acknowledged (the caller acknowledges). Otherwise the PMI is handled as `handle` does.
   */
  async handleIfDue(ev: PmiEvent): Promise<PmiRecord | undefined> {
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    if (this.faults.has('skip-merged-pmi')) return undefined;
    return this.run(ev, true);
  }

  private async run(ev: PmiEvent, ifDue: boolean): Promise<PmiRecord | undefined> {
    const rt0 = this.io.roundTrips, b0 = this.io.batches;
    const done = (r: Omit<PmiRecord, 'roundTrips' | 'batches'>): PmiRecord =>
      ({ ...r, roundTrips: this.io.roundTrips - rt0, batches: this.io.batches - b0 });
    const at = this.plan.chunks.bytes;
    const raised = IA32_PERF_GLOBAL_STATUS.decode(ev.globalStatus).Trace_ToPA_PMI;
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    const topaPmi = this.faults.has('invert-not-topa') ? !raised : raised;
    if (!topaPmi) return done({ action: 'not-topa', stopped: false, error: false, at });
    const ctl = IA32_RTIT_CTL.decode(ev.ctl);
    if (ctl.InjectPsbPmiOnEnable && !ctl.TraceEn) {
      await this.ignorePreserved(ev);
      return done({ action: 'ignored-preserved', stopped: false, error: false, at });
    }
    // Step 1–3: stop (unless the top half did), read the pointers and STATUS, in one batch.
    const stopOp = ctl.TraceEn && !ev.traceEnCleared ? [wr(IA32_RTIT_CTL.address, withoutTraceEn(ev.ctl), 'pmi: stop (TraceEn=0)')] : [];
    const vals = await this.io.batch([
      ...stopOp,
      rd(IA32_RTIT_OUTPUT_BASE.address, 'pmi: read OUTPUT_BASE'),
      rd(IA32_RTIT_OUTPUT_MASK_PTRS.address, 'pmi: read OUTPUT_MASK_PTRS'),
      rd(STATUS.address, 'pmi: read STATUS'),
    ]);
    const closeWindow = await openWindow(this.meter, this.io.cpu);
    const [outputBase, maskPtrs, status] = vals.slice(stopOp.length) as [bigint, bigint, bigint];
    const hw = { outputBase, maskPtrs };
    const stopped = STATUS.decode(status);
    if (ifDue && !stopped.Stopped && !stopped.Error && !this.plan.intFilled(hw)) {
      await closeWindow();
      if (ctl.TraceEn) await this.io.batch([wr(IA32_RTIT_CTL.address, ev.ctl, 'pmi: restore CTL (not this context\'s)')]);
      return undefined;
    }
    // Step 4: consume and refill.
    const { st, cut, topaStop, info } = await this.account(hw, status);
    // CTL goes back when tracing was on (a PMI taken with TraceEn=0 leaves nothing to restore). After
    // an operational error the CPU keeps TriggerEn=0 whatever CTL says (docs/sdm/msrs.md §4), so tracing
    // stays off then.
    const restore = async (): Promise<void> => {
      if (ctl.TraceEn) await this.io.batch([wr(IA32_RTIT_CTL.address, ev.ctl, 'pmi: restore CTL')]);
    };
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    if (this.faults.has('restore-ctl-before-refill')) await restore();
    const update = st.Error ? this.unrefilled() : await this.refill(hw);
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    if (this.faults.has('restore-ctl-before-pointers')) await restore();
    // Steps 5–6: STATUS and MASK_PTRS to write back.
    const { status: newStatus, maskPtrs: newMask } = this.fixes(status, topaStop, info, update);
    const writes: StepOp[] = [];
    if (newMask !== undefined) writes.push(wr(IA32_RTIT_OUTPUT_MASK_PTRS.address, newMask, 'pmi: OUTPUT_MASK_PTRS'));
    if (newStatus !== status) writes.push(wr(STATUS.address, newStatus, 'pmi: STATUS'));
    // Step 7: ack GLOBAL_STATUS[55] through 0x390, in the same batch.
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    if (this.faults.has('unmask-before-clear')) await this.io.pmiEnable();
    await this.io.batch([...writes, ...this.ack(ev.acked)]);
    // Step 8: unmask the LVT entry (the CPU masked it on delivery: docs/sdm/msrs.md §11.1). Whether a
    // perf handler on the host already did is not ours to know: unmasking again changes nothing.
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    if (!this.faults.has('skip-unmask')) await this.io.pmiEnable();
    // Step 9: restore CTL; tracing resumes if it was on (not after an operational error). A fault
    // that restored it early writes it again here: TraceEn 1→1 changes nothing.
    const window = await closeWindow();
    await restore();
    return done({ action: 'handled', status, stopped: topaStop, error: st.Error, at: cut, window, branch: update?.branch });
  }

  /**
   * A ToPA PMI that belongs to this plan's context while it is switched out (saved by XSAVES or by
   * hand; another context may be loaded and tracing): the SDM's motivating case for PMIs across
   * XSAVES. The same steps as `handle`, but on the saved image instead of the MSRs: the pointers
   * and STATUS come from the image, the tables are refilled in memory, and the fixed STATUS and
   * MASK_PTRS go back into the image, which the next restore loads. The live PT state is not
   * touched, and neither is GLOBAL_STATUS: the caller acknowledges the PMI once (`acknowledge`),
   * after every context it was due to.
   */
  async handleSaved(image: PtImage): Promise<PmiRecord> {
    const rt0 = this.io.roundTrips, b0 = this.io.batches;
    const hw = { outputBase: image.outputBase, maskPtrs: image.maskPtrs };
    const { st, cut, topaStop, info } = await this.account(hw, image.status);
    const update = st.Error ? this.unrefilled() : await this.refill(hw);
    const fixed = this.fixes(image.status, topaStop, info, update);
    image.status = fixed.status;
    if (fixed.maskPtrs !== undefined) image.maskPtrs = fixed.maskPtrs;
    return {
      action: 'handled-saved', roundTrips: this.io.roundTrips - rt0, batches: this.io.batches - b0, status: image.status, stopped: topaStop, error: st.Error, at: cut,
      branch: update?.branch,
    };
  }

  /** Acknowledges [55] and unmasks the LVT entry without touching tracing (after `handleSaved`). */
  async acknowledge(ev: PmiEvent): Promise<void> {
    await this.io.batch(this.ack(ev.acked));
    await this.io.pmiEnable();
  }

  /** No refill after an operational error: the plan's INT regions filled so far are serviced all the same. */
  private unrefilled(): undefined {
    this.plan.unrefilled?.();
    return undefined;
  }

  /** The plan's refill; the branch it took goes to the transcript as a note, and to the record. */
  private async refill(hw: HwPointers): Promise<PointerUpdate> {
    const update = await this.plan.refill(hw);
    this.io.note(`pmi: ${update.branch}`);
    return update;
  }

  /** Step 4, first half: account for everything up to `hw` and ledger a STOP cut or an operational error. */
  private async account(hw: HwPointers, status: bigint): Promise<{ st: ReturnType<typeof STATUS.decode>; cut: number; topaStop: boolean; info: PointerInfo }> {
    const st = STATUS.decode(status);
    // Where the pointer is must be known before the refill moves markers.
    const info = this.plan.pointerInfo(hw);
    await this.plan.consume(hw);
    const cut = this.plan.chunks.bytes;
    const topaStop = st.Stopped && info.atFullStopEntry;
    if (topaStop) this.losses.add(cut, null, 'stop');
    // An operational error is a loss too, but Error stays set to the final stop, which records it.
    return { st, cut, topaStop, info };
  }

  /**
   * Steps 5–6, after the refill: after a ToPA STOP, Stopped cleared with MASK_PTRS moved past the
   * full STOP region (§4.4, §7.2; a TraceStop's Stopped and an Error stay, and tracing stays off
   * then), and PendTopaPMI cleared (§7.4 rule 2: it can be 1 only under PMI preservation). STATUS
   * is written back only when this changed it.
   */
  private fixes(status: bigint, topaStop: boolean, info: PointerInfo, update: PointerUpdate | undefined): { status: bigint; maskPtrs: bigint | undefined } {
    const st = STATUS.decode(status);
    const fixed = { ...st, Stopped: st.Stopped && !topaStop, PendTopaPMI: false };
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    if (this.faults.has('skip-pend-clear')) fixed.PendTopaPMI = st.PendTopaPMI;
    if (update?.maskPtrs !== undefined) return { status: STATUS.encode(fixed), maskPtrs: update.maskPtrs };
    // Past the full STOP region, in the MSR and in the plan's bookkeeping alike.
    if (topaStop) this.plan.pastStop?.();
    return { status: STATUS.encode(fixed), maskPtrs: topaStop ? info.nextEntry : undefined };
  }

  /**
   * After the final disable (TraceEn=0, `status` as the disable read it): a ToPA PMI still pending
   * (GLOBAL_STATUS[55]) or pended (STATUS.PendTopaPMI) is settled — PendTopaPMI cleared, [55]
   * acknowledged, the LVT entry unmasked — and STATUS read again. Returns the record and STATUS as
   * it now is, or undefined when nothing was pending.
   */
  async settleAtStop(status: bigint): Promise<{ readonly record: PmiRecord; readonly status: bigint } | undefined> {
    const rt0 = this.io.roundTrips, b0 = this.io.batches;
    const [global] = await this.io.batch([rd(IA32_PERF_GLOBAL_STATUS.address, 'final stop: read GLOBAL_STATUS')]);
    const raised = IA32_PERF_GLOBAL_STATUS.decode(global!).Trace_ToPA_PMI;
    const st = STATUS.decode(status);
    if (!raised && !st.PendTopaPMI) return undefined;
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    if (this.faults.has('skip-final-settle')) return undefined;
    const clear = st.PendTopaPMI ? [wr(STATUS.address, STATUS.encode({ ...st, PendTopaPMI: false }), 'final stop: clear PendTopaPMI')] : [];
    const vals = await this.io.batch([...clear, ...this.ack(!raised), rd(STATUS.address, 'final stop: read STATUS')]);
    if (raised) await this.io.pmiEnable();
    const record: PmiRecord = {
      action: 'final-stop', roundTrips: this.io.roundTrips - rt0, batches: this.io.batches - b0, status,
      stopped: st.Stopped, error: st.Error, at: this.plan.chunks.bytes,
    };
    return { record, status: vals[vals.length - 1]! };
  }

  /** §7.4 rule 1: the PMI belongs to a switched-out context; ack, unmask, leave PendTopaPMI=1. */
  private async ignorePreserved(ev: PmiEvent): Promise<void> {
    await this.io.batch(this.ack(ev.acked));
    await this.io.pmiEnable();
  }

  /** The acknowledgement of GLOBAL_STATUS[55], unless the top half did it (or a fault skips or repeats it). */
  private ack(acked: boolean): StepOp[] {
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    if (this.faults.has('skip-global-ack')) return [];
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    if (this.faults.has('double-ack')) return ACK(false);
    return ACK(acked);
  }
}
