// One trace run (docs/design.md "One trace run, as data flows"): probe → check →
// plan → program → run (PMI handler, context switches) → stop → collect.
// Written against Target and Execution only.
import { collect, type Collected, type TargetFigures } from './collect/collect.js';
import { PtError } from './base/errors.js';
import { LossRecorder } from './collect/ledger.js';
import { checkRequest } from './check-request.js';
import { ContextSwitcher, readImage, writeImage, type SavedContext } from './context-switch.js';
import { NO_FAULTS, type DriverFaults } from './faults.js';
import { assertNever } from './base/assert-never.js';
import { IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS } from './hw/msrs.js';
import { rd, TargetIo } from './io.js';
import type { OutputPlan } from './output/plan.js';
import { SingleRangePlan } from './output/single-range.js';
import { PmiHandler, type PmiRecord } from './pmi/handler.js';
import type { TraceOffMeter } from './pmi/window.js';
import { probe, type ProbeResult } from './probe.js';
import { Programmer, type StopState } from './program.js';
import type { TraceRequest } from './request.js';
import type { Execution, Placement, StartOpts, Target, TargetEvent, Workload } from './target.js';
import { TopaManager } from './topa/manager.js';
import { describeLeaks, freeOrLeak, type Teardown } from './teardown.js';
import { confine, type Confinement } from './confine.js';

/** Options of a trace session. */
export interface SessionOptions {
  readonly cpu?: number;
  readonly signal?: AbortSignal;
  /** The target's trace-off meter (sim: branches retired and bytes written). */
  readonly meter?: TraceOffMeter;
  /** Raise a `slice` event every this many branches (context-switch runs). */
  readonly sliceBranches?: number;
  /** Deliberate driver bugs (faults.ts): negative controls of the scenario suite only. */
  readonly faults?: DriverFaults;
  /** Told what the release did (freed, or leaked because tracing could not be confirmed off). */
  readonly onTeardown?: (t: Teardown) => void;
  /**
   * The workload the trace is for: the request is confined to it (confine.ts: an IP filter on its
   * image, or a CR3 filter on its address space) unless it already filters. Absent: as requested.
   */
  readonly confineTo?: Workload;
}

/** Everything a run produced. */
export interface TraceResult extends Collected {
  readonly probe: ProbeResult;
  readonly pmis: readonly PmiRecord[];
  readonly switches: number;
  readonly exitCode?: number;
  readonly final: StopState;
}

/** One trace run on one CPU of a target. */
export class TraceSession {
  readonly pmis: PmiRecord[] = [];
  readonly losses = new LossRecorder();
  switches = 0;
  exitCode: number | undefined;
  private readonly handler: PmiHandler;
  private switcher: ContextSwitcher | undefined;
  /** The saved state while this context is switched out. */
  private saved: SavedContext | undefined;
  /**
   * TraceEn may be 1 because of this session: from the first enable (issued or not: a batch that
   * threw may have reached the CPU) until a disable read TraceEn=0 back.
   */
  private mayTrace = false;
  /** What `release` did, once it ran. */
  private teardown: Promise<Teardown> | undefined;

  private constructor(
    readonly io: TargetIo,
    readonly probed: ProbeResult,
    readonly plan: OutputPlan,
    /** The request as asked for (before any confinement). */
    private readonly asked: TraceRequest,
    private readonly meter: TraceOffMeter | undefined,
    private readonly faults: DriverFaults,
    private readonly onTeardown: ((t: Teardown) => void) | undefined,
    /** The workload the trace is confined to (SessionOptions.confineTo), unless a driver fault says not to. */
    private readonly confineTo: Workload | undefined,
    /** SessionOptions.confineTo was given: the transcript says how the trace was confined. */
    private readonly noteConfinement: boolean,
    confined: { req: TraceRequest; how: Confinement },
  ) {
    this.handler = new PmiHandler(io, plan, this.losses, meter, faults);
    this.adopt(confined);
  }

  /** The request as programmed: the one asked for, confined to the workload (SessionOptions.confineTo). */
  get request(): TraceRequest { return this.programmed; }
  /** How the request was confined to its workload (confine.ts). */
  get confinement(): Confinement { return this.confinedHow; }
  /** The enable and disable sequences of the request as programmed. */
  get programmer(): Programmer { return this.prog; }

  private programmed!: TraceRequest;
  private confinedHow: Confinement = 'none';
  private prog!: Programmer;

  /** Takes `c` as the request to program: checked against the CPU (before any MSR write), with its programmer and switcher. */
  private adopt(c: { req: TraceRequest; how: Confinement }): void {
    checkRequest(this.probed.caps, c.req, this.probed.errata);
    this.programmed = c.req;
    this.confinedHow = c.how;
    this.prog = new Programmer(this.io, c.req, this.faults);
    const mode = c.req.switching ?? 'none';
    this.switcher = mode === 'none' ? undefined : new ContextSwitcher(this.io, this.probed.caps, mode, this.prog.filterOps(), this.faults);
  }

  /**
   * Probe, refuse what the CPU lacks or its errata rule out (before any MSR write), fail safe if
   * TraceEn=1, plan the output. The request is confined to `confineTo` as far as the target can tell
   * now (its `cr3Of`); a CR3 the target learns only once the workload is placed comes with `start`.
   */
  static async open(target: Target, asked: TraceRequest, o: SessionOptions = {}): Promise<TraceSession> {
    const cpu = o.cpu ?? 0;
    const probed = await probe(target, cpu, { signal: o.signal });
    const faults = o.faults ?? NO_FAULTS;
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    const confineTo = o.confineTo && !faults.has('no-confine') ? o.confineTo : undefined;
    const confined = confineTo ? confine(asked, confineTo, probed.caps, target.cr3Of?.(cpu)) : { req: asked, how: 'none' as const };
    checkRequest(probed.caps, confined.req, probed.errata);
    const io = new TargetIo(target, cpu, o.signal ? { signal: o.signal } : {});
    await new Programmer(io, confined.req, faults).assertIdle();
    const plan = confined.req.output.scheme === 'topa' ? await TopaManager.create(io, confined.req.output) : await SingleRangePlan.create(io, confined.req.output);
    const s = new TraceSession(io, probed, plan, asked, o.meter, faults, o.onTeardown, confineTo, o.confineTo !== undefined, confined);
    if (o.confineTo && confined.how !== 'none') io.note(`confine: ${confined.how}`);
    return s;
  }

  /**
   * Unmask the LVT PMI entry for ToPA (SDM recipe, docs/sdm/output.md §4.5 step 1), then the enable
   * sequence. `placed` is where the workload waits (the late enable: traceRun); a CR3 it names
   * confines a request that nothing else could (a CPU without address ranges, a target whose CR3
   * only the placement tells).
   */
  async start(placed: Placement = {}): Promise<void> {
    if (this.confineTo && this.confinedHow === 'none' && placed.cr3 !== undefined) {
      const c = confine(this.asked, this.confineTo, this.probed.caps, placed.cr3);
      if (c.how !== 'none') { this.adopt(c); this.io.note(`confine: ${c.how}`); }
    }
    if (this.noteConfinement && this.confinedHow === 'none') this.io.note('confine: none');
    if (this.plan.scheme === 'topa') await this.io.pmiEnable();
    this.mayTrace = true;
    await this.prog.enable(this.plan.initial);
  }

  /**
   * Starts `workload` on the session's CPU and enables tracing for it, the late way: the workload is
   * started held, tracing is enabled once it waits at its entry (its placement may name the CR3 that
   * confines the trace), and then it is let go. Nothing of what makes it ready is traced. Returns
   * the running execution; one that could not be placed, enabled or let go is disposed of first.
   */
  async launch(workload: Workload, opts: Omit<StartOpts, 'held' | 'signal'> = {}): Promise<Execution> {
    const call = this.io.opts;
    const target = this.io.target;
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    if (this.faults.has('early-enable')) {
      await this.start();
      return target.start(workload, this.io.cpu, { ...opts, ...call });
    }
    const exec = target.start(workload, this.io.cpu, { ...opts, ...call, held: true });
    try {
      await this.start(await exec.placed(call));
      await exec.go(call);
      return exec;
    } catch (e) {
      await exec[Symbol.asyncDispose]();
      throw e;
    }
  }

  /** Consumes one target event. Returns false at `exit`. */
  async onEvent(ev: TargetEvent): Promise<boolean> {
    switch (ev.kind) {
      case 'pmi':
        this.pmis.push(await this.handler.handle(ev));
        return true;
      case 'slice':
        if (this.switcher) {
          // Switch out and back in: what another context does in between is the target's.
          await this.switchOut();
          await this.switchIn();
        }
        return true;
      case 'exit':
        this.exitCode = ev.code;
        return false;
      case 'fault':
        throw ev.error;
      default:
        return assertNever(ev);
    }
  }

  /** Saves this context's trace state (the switcher's way) and accounts for its output so far. */
  async switchOut(): Promise<void> {
    if (!this.switcher) throw new PtError('bad_state', 'this trace run has no context switching (TraceRequest.switching)');
    if (this.saved) throw new PtError('bad_state', 'the context is already switched out');
    const saved = await this.switcher.save();
    await this.plan.consume(await this.readPointers(saved));
    this.saved = saved;
  }

  /** Restores the saved trace state (CTL last); tracing resumes where the saved image says. */
  async switchIn(): Promise<void> {
    if (!this.switcher || !this.saved) throw new PtError('bad_state', 'the context is not switched out');
    await this.switcher.restore(this.saved);
    this.saved = undefined;
    this.switches++;
  }

  /** True while switched out with a filled INT region not yet handled: a ToPA PMI now is (also) this context's. */
  get pmiDueWhileOut(): boolean {
    return this.saved !== undefined && this.plan.intFilled(readImage(this.saved));
  }

  /** The loaded context's part of a ToPA PMI that was also a switched-out one's (PmiHandler.handleIfDue); true when it was this context's too. */
  async handleIfDue(ev: Extract<TargetEvent, { kind: 'pmi' }>): Promise<boolean> {
    const r = await this.handler.handleIfDue(ev);
    if (r) this.pmis.push({ ...r, merged: true });
    return r !== undefined;
  }

  /** Handles a ToPA PMI for this switched-out context on its saved image (PmiHandler.handleSaved); the caller acknowledges it. */
  async handleWhileOut(): Promise<void> {
    if (!this.saved) throw new PtError('bad_state', 'the context is not switched out');
    const img = readImage(this.saved);
    this.pmis.push(await this.handler.handleSaved(img));
    this.saved = writeImage(this.saved, img);
  }

  /** Acknowledges a ToPA PMI and unmasks the LVT without touching this context's tracing. */
  async acknowledge(ev: Extract<TargetEvent, { kind: 'pmi' }>): Promise<void> {
    await this.handler.acknowledge(ev);
  }

  /** Runs the event loop of `exec` until `exit`. */
  async run(exec: Execution): Promise<void> {
    for await (const ev of exec.events) if (!(await this.onEvent(ev))) break;
  }

  /** The disable sequence, a ToPA PMI still pending settled (PmiHandler.settleAtStop), then collection. */
  async stop(figures: TargetFigures | (() => TargetFigures) = {}): Promise<TraceResult> {
    let final = await this.prog.disable();
    this.mayTrace = false; // the disable read TraceEn=0 back
    if (this.plan.scheme === 'topa') {
      const settled = await this.handler.settleAtStop(final.status);
      if (settled) { this.pmis.push(settled.record); final = { ...final, status: settled.status }; }
    }
    if (typeof figures === 'function') figures = figures(); // after the flush at TraceEn 1→0
    const c = await collect(this.io, this.plan, final, this.losses, figures);
    return { ...c, probe: this.probed, pmis: this.pmis, switches: this.switches, final, ...(this.exitCode === undefined ? {} : { exitCode: this.exitCode }) };
  }

  /**
   * Gives the output regions and tables back, whatever ended the run (docs/design.md "The
   * invariant"): while TraceEn may be 1 because of this session (the run threw, was aborted, or
   * never reached `stop`), TraceEn=0 is first written and read back, with a deadline of its own
   * rather than the run's signal; if that cannot be confirmed, nothing is freed and every buffer is
   * reported as leaked. Idempotent: a second call returns what the first did.
   */
  release(): Promise<Teardown> {
    this.teardown ??= (async () => {
      // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
      const unsafe = this.faults.has('free-before-disable');
      const cpus = this.mayTrace && !unsafe ? [{ cpu: this.io.cpu, ctl: this.prog.ctl }] : [];
      const t = await freeOrLeak(this.io.target, this.plan.buffers(), cpus);
      if (t.traceOff) this.mayTrace = false;
      if (t.leaked.length > 0) this.io.note(`teardown: left allocated (${describeLeaks(t.leaked)}): ${t.why ?? ''}`);
      this.onTeardown?.(t);
      return t;
    })();
    return this.teardown;
  }

  /** The output pointers of a saved context (exact: TraceEn=0 after the save). */
  private async readPointers(saved: Awaited<ReturnType<ContextSwitcher['save']>>): Promise<{ outputBase: bigint; maskPtrs: bigint }> {
    if (saved.kind === 'manual') return { outputBase: saved.live[0]!, maskPtrs: saved.live[1]! };
    const [outputBase, maskPtrs] = await this.io.batch([
      rd(IA32_RTIT_OUTPUT_BASE.address, 'slice: read OUTPUT_BASE'), rd(IA32_RTIT_OUTPUT_MASK_PTRS.address, 'slice: read OUTPUT_MASK_PTRS'),
    ]);
    return { outputBase: outputBase!, maskPtrs: maskPtrs! };
  }
}

/**
 * A whole run: open, start the workload held at its entry, enable, let it go, handle its events,
 * stop, collect, free. TraceEn is set only once the workload is in place (the late enable: what
 * runs before its first instruction — the image copied in, the process made and mapped — is not
 * traced; docs/design.md "Realism"). Whatever ends it early (a workload fault, a timeout, an abort)
 * still runs the disable sequence before anything is freed (TraceSession.release; `onTeardown`
 * hears what it did).
 */
export async function traceRun(target: Target, workload: Workload, req: TraceRequest, o: SessionOptions & { figures?: () => TargetFigures } = {}): Promise<TraceResult> {
  const s = await TraceSession.open(target, req, { confineTo: workload, ...o });
  try {
    await using exec = await s.launch(workload, o.sliceBranches ? { sliceBranches: o.sliceBranches } : {});
    await s.run(exec);
    return await s.stop(o.figures ?? {});
  } finally {
    await s.release();
  }
}
