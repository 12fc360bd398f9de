// A running workload on the sim target (driver/target.ts Execution): an async
// iterable of events that advances the model only while the consumer awaits
// the next event (docs/design.md "How the model runs"). Every event is yielded
// with the CPU in the driver's untraced handler and the generator flushed,
// so nothing is written to memory between an event and the next pull.
import { PtError, throwIfAborted } from '../../../driver/base/errors.js';
import type { CallOpts, Execution, Placement, TargetEvent } from '../../../driver/target.js';
import { TRACE_TOPA_PMI as TOPA_PMI } from '../../../driver/hw/msrs.js';
import { MSR } from '../msr-addresses.js';
import type { CpuTrace } from './cpu-trace.js';
import type { Engine } from './engine.js';
import { cyclesOfUs, FROZEN, type Realism } from '../realism.js';

/** What the model adds to a `pmi` event: how far the CPU ran between the PMI and the handler. */
export interface PmiFigures {
  /** Bytes written to memory after the PMI was raised, before the handler was entered. */
  readonly bytesSincePmi: number;
  /** Core cycles of the modelled clock in the same window. */
  readonly cyclesSincePmi: number;
}

/**
 * What the PMI's top half does before the driver sees the event, as the guest module's NMI handler
 * does on real targets (guest/kmod/ptlab.c `ptlab_nmi`): acknowledge GLOBAL_STATUS[55] through
 * IA32_PERF_GLOBAL_STATUS_RESET, and clear TraceEn. Default: nothing (the driver does both).
 */
export interface TopHalf {
  readonly ack: boolean;
  readonly clearTraceEn: boolean;
  /** Negative control (knob top-half-skips-ack): report the acknowledgement without making it. */
  readonly lieAboutAck?: boolean;
}

/** The sim's `pmi` event: the Target fields plus the model's figures (`model`). */
export type SimPmiEvent = Extract<TargetEvent, { kind: 'pmi' }> & { readonly model: PmiFigures };

/** One workload run on one CPU of a SimTarget; single consumer; leaving the loop early stops it. */
export class SimExecution implements Execution {
  readonly events: AsyncIterable<TargetEvent>;
  private iter: AsyncGenerator<TargetEvent> | undefined;
  private closed = false;
  private sliceDue = false;
  /** Started held (StartOpts.held) and not yet let go. */
  private holding: boolean;

  constructor(
    private readonly cpu: number,
    private readonly trace: CpuTrace,
    private readonly engine: Engine | Error,
    private readonly signal: AbortSignal | undefined,
    private readonly onEnd: () => void,
    private readonly topHalf: TopHalf | undefined = undefined,
    private readonly realism: Realism = FROZEN,
    private readonly held = false,
  ) {
    this.holding = held;
    if (held && !(engine instanceof Error)) {
      // Put in place now, as a lab machine's helper does before it answers: whatever traces the
      // workload's address space at this moment traces the loader.
      trace.inHandler = false;
      engine.placeHeld();
      trace.inHandler = true;
    }
    this.events = {
      [Symbol.asyncIterator]: () => {
        if (this.iter) throw new PtError('bad_state', 'sim: the events of an execution can be iterated once');
        this.iter = this.run();
        return this.iter;
      },
    };
  }

  /** Stops the run where it is (the CPU stays in the handler; tracing state is left as the driver set it). */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.iter) await this.iter.return(undefined);
    else this.onEnd();
  }

  /** Started held: the workload waits at its entry, under the CR3 it was started with. */
  async placed(opts?: CallOpts): Promise<Placement> {
    throwIfAborted(opts?.signal);
    if (!this.held) throw new PtError('bad_state', 'sim: the workload was not started held (StartOpts.held)');
    if (this.engine instanceof Error) throw this.engine;
    return { cr3: this.engine.cr3 };
  }

  /** Started held: the workload may run from its entry once the driver pulls its events. */
  async go(opts?: CallOpts): Promise<void> {
    throwIfAborted(opts?.signal);
    if (!this.holding) throw new PtError('bad_state', this.held ? 'sim: the workload was already let go' : 'sim: the workload was not started held (StartOpts.held)');
    if (this.engine instanceof Error) throw this.engine;
    this.holding = false;
  }

  /** Branches this execution has retired so far (0 when its workload could not start). */
  get branches(): number {
    return this.engine instanceof Error ? 0 : this.engine.branches;
  }

  private async *run(): AsyncGenerator<TargetEvent> {
    try {
      const e = this.engine;
      if (e instanceof Error) { yield { kind: 'fault', cpu: this.cpu, error: e }; return; }
      if (this.holding) throw new PtError('bad_state', 'sim: the workload is held at its entry: let it go (Execution.go) before pulling its events');
      const t = this.trace;
      while (!this.closed) {
        throwIfAborted(this.signal);
        if (t.pmiPending) {
          // Delivered in the handler (or with a stop). Unless its top half froze the task, the CPU runs
          // on for the remote handler's latency before the handler's first action (realism.ts).
          const ev = this.pmiEvent();
          if (!ev.frozen) this.runDuringHandler(e);
          yield ev;
          continue;
        }
        if (this.sliceDue) { this.sliceDue = false; yield { kind: 'slice', cpu: this.cpu, branches: e.branches }; continue; }
        if (e.done) { yield { kind: 'exit', cpu: this.cpu, code: 0 }; return; }
        t.inHandler = false;
        e.leaveHandler();
        const why = e.run();
        e.enterHandler();
        t.inHandler = true;
        if (why === 'slice') this.sliceDue = true;
      }
    } finally {
      this.closed = true;
      this.onEnd();
    }
  }

  /**
   * The remote handler's latency (realism.ts `handlerLatencyUs`): the NMI returns straight into the
   * workload, which runs on (traced while TraceEn is 1) until the handler's first action arrives, or
   * until it exits or another PMI comes (delivered when perf unmasked the LVT).
   */
  private runDuringHandler(e: Engine): void {
    if (this.realism.handlerLatencyUs <= 0 || e.done) return;
    const t = this.trace;
    t.inHandler = false;
    e.leaveHandler(true);
    const why = e.run(t.gen.now + cyclesOfUs(this.realism.handlerLatencyUs));
    e.enterHandler();
    t.inHandler = true;
    if (why === 'slice') this.sliceDue = true;
  }

  /**
   * GLOBAL_STATUS, CTL and STATUS as the top half reads them, before it changes anything; then what
   * the top half does (TopHalf), in the module's order: clear TraceEn, then acknowledge [55]; and
   * whether the traced task is frozen until the driver's next pull. A co-resident perf handler
   * unmasks the LVT at once (realism.ts `perfUnmasksLvt`).
   */
  private pmiEvent(): SimPmiEvent {
    const t = this.trace;
    t.pmiPending = false;
    const f = t.file;
    const globalStatus = f.peek(MSR.IA32_PERF_GLOBAL_STATUS), ctl = f.peek(MSR.IA32_RTIT_CTL), status = f.peek(MSR.IA32_RTIT_STATUS);
    let acked = false, traceEnCleared = false;
    const h = this.topHalf;
    if (h && (globalStatus & TOPA_PMI) !== 0n) {
      if (h.clearTraceEn && (ctl & 1n) === 1n) traceEnCleared = f.write(MSR.IA32_RTIT_CTL, ctl & ~1n) === undefined;
      if (h.ack) acked = h.lieAboutAck === true || f.write(MSR.IA32_PERF_GLOBAL_STATUS_RESET, TOPA_PMI) === undefined;
    }
    if (this.realism.perfUnmasksLvt) f.unmaskPmi();
    // Frozen: the model stops while the driver thinks, unless a latency lets it run and no top half freezes it.
    const frozen = this.realism.handlerLatencyUs <= 0 || this.realism.topHalfFreezes;
    return {
      kind: 'pmi', cpu: this.cpu, globalStatus, ctl, status, acked, traceEnCleared, frozen,
      model: { bytesSincePmi: t.written - t.pmiWritten, cyclesSincePmi: t.gen.now - t.pmiCycles },
    };
  }
}
