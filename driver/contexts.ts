// Several software contexts on one CPU: each has its own
// workload, its own PT configuration and output (a TraceSession), and the
// driver's context switch runs between them at every `slice` event — the
// situation XSAVES/XRSTORS of PT state exist for (docs/sdm/xsave.md §2–§4).
//
// A ToPA PMI can then arrive while another context is loaded: its INT region
// filled just before the switch, and the PMI (imprecise, docs/sdm/output.md §4.5)
// was delivered after XSAVES. Without PMI preservation the handler must edit
// the switched-out context's tables and saved image, not the MSRs, which hold
// someone else's state (the SDM's motivating case for the ToPA PMI across
// XSAVES). With PMI preservation a PMI taken with TraceEn=0 is left pended
// instead (§7.4 rule 1) and comes back at the context's XRSTORS.
import type { TargetFigures } from './collect/collect.js';
import { PtError } from './base/errors.js';
import { IA32_PERF_GLOBAL_STATUS } from './hw/msrs.js';
import type { TraceRequest } from './request.js';
import { TraceSession, type SessionOptions, type TraceResult } from './session.js';
import type { CallOpts, Execution, Placement, Target, TargetEvent, Workload } from './target.js';

/** One software context: what it runs and how it is traced (`req.switching` must not be 'none'). */
export interface ContextSpec {
  readonly name: string;
  readonly workload: Workload;
  readonly req: TraceRequest;
}

/** Options of a multi-context run. */
export interface ContextRunOptions extends SessionOptions {
  /** Branches each context runs before the CPU switches to the next one. */
  readonly sliceBranches: number;
  /**
   * Bytes the CPU has written to memory so far (sim: SimTarget.written): when given, each
   * context's `written` is what the CPU wrote while that context's state was loaded.
   */
  readonly writtenNow?: () => number;
}

/** What one context produced. */
export interface ContextResult extends TraceResult {
  readonly name: string;
}

/**
 * Runs `specs` round-robin on one CPU of `target` until every workload exits; returns each
 * context's collected stream and ledger. The first context starts traced; a context runs for the
 * first time after the previous one was switched out (its own enable sequence), later ones
 * resume with the driver's restore.
 */
export async function traceContexts(target: Target, specs: readonly ContextSpec[], o: ContextRunOptions): Promise<ContextResult[]> {
  // Stryker disable next-line all: a guard against misuse or a broken invariant that no valid scenario reaches (test/driver/guards.test.ts)
  if (specs.length === 0) throw new PtError('bad_config', 'no context to run');
  // Stryker disable next-line all: a guard against misuse or a broken invariant that no valid scenario reaches (test/driver/contexts.test.ts)
  const unswitched = specs.find((s) => (s.req.switching ?? 'none') === 'none');
  // Stryker disable next-line all: a guard against misuse or a broken invariant that no valid scenario reaches (test/driver/contexts.test.ts)
  if (unswitched) throw new PtError('bad_config', `context ${unswitched.name}: a shared CPU needs switching 'xsaves' or 'manual'`);
  const cpu = o.cpu ?? 0;
  const sessions: TraceSession[] = [];
  const execs: Execution[] = [];
  try {
    for (const s of specs) sessions.push(await TraceSession.open(target, s.req, { confineTo: s.workload, ...o }));
    return await new Scheduler(target, specs, sessions, execs, cpu, o).run();
  } finally {
    for (const e of execs) await e[Symbol.asyncDispose]();
    for (const s of sessions) await s.release();
  }
}

/** The round-robin loop: which context is loaded, the switches, and whose PMI it is. */
class Scheduler {
  private loaded = 0;
  private readonly started = new Set<number>();
  private readonly live = new Set<number>();
  private readonly results: (ContextResult | undefined)[];
  private readonly written: number[];
  private mark = 0;
  /** Where each context's workload waits before its first enable. */
  private readonly placements: Placement[] = [];
  private readonly call: CallOpts;

  constructor(
    private readonly target: Target,
    private readonly specs: readonly ContextSpec[],
    private readonly sessions: readonly TraceSession[],
    private readonly execs: Execution[],
    private readonly cpu: number,
    private readonly o: ContextRunOptions,
  ) {
    this.results = specs.map(() => undefined);
    this.call = o.signal ? { signal: o.signal } : {};
    this.written = specs.map(() => 0);
  }

  async run(): Promise<ContextResult[]> {
    const iters: AsyncIterator<TargetEvent>[] = [];
    for (const [i, s] of this.specs.entries()) {
      // Every context is a thread of the shared CPU (for the first, nothing runs yet to share with).
      // Started held: each context's first enable comes once it waits at its entry (TraceSession.launch's late enable).
      const exec = this.target.start(s.workload, this.cpu, {
        sliceBranches: this.o.sliceBranches, thread: true, held: true, ...this.call,
      });
      this.execs.push(exec);
      this.placements.push(await exec.placed(this.call));
      iters.push(exec.events[Symbol.asyncIterator]());
      this.live.add(i);
    }
    this.mark = this.o.writtenNow?.() ?? 0;
    await this.enter(0);
    while (this.live.size > 0) {
      const cur = this.loaded;
      const next = await iters[cur]!.next();
      // Stryker disable next-line all: a target whose events end without an exit breaks the Target contract; unreachable on a conforming target
      if (next.done) throw new PtError('bad_state', `context ${this.specs[cur]!.name}: its events ended without an exit`);
      const ev = next.value;
      switch (ev.kind) {
        case 'pmi': await this.pmi(ev); break;
        case 'slice': await this.rotate(); break;
        case 'exit': await this.finish(cur, ev.code); break;
        // Stryker disable next-line all: the model's workloads never fault; a fault event is passed on as is
        case 'fault': throw ev.error;
        // Stryker disable next-line all: exhaustiveness check: no other event kind exists
        default: { const x: never = ev; throw new PtError('bad_state', `unknown event ${String(x)}`); }
      }
    }
    return this.results.map((r) => r!);
  }

  /**
   * A PMI: switched-out contexts with a filled INT region are handled on their saved images, and
   * then the loaded context if its own INT region filled too; if no switched-out one is due, the PMI
   * is the loaded context's and its handler runs as on a single context.
   */
  private async pmi(ev: Extract<TargetEvent, { kind: 'pmi' }>): Promise<void> {
    const topa = IA32_PERF_GLOBAL_STATUS.decode(ev.globalStatus).Trace_ToPA_PMI;
    // Only a switched-out session can be due (the loaded one, one not started and one that exited are not).
    const out = topa ? this.sessions.flatMap((s, i) => (s.pmiDueWhileOut ? [i] : [])) : [];
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    if (this.o.faults?.has('ignore-switched-out')) out.length = 0;
    if (out.length === 0) {
      await this.sessions[this.loaded]!.onEvent(ev);
      return;
    }
    for (const i of out) await this.sessions[i]!.handleWhileOut();
    // One interrupt may stand for the loaded context's filled INT region too (a merged PMI: §4.5).
    if (await this.sessions[this.loaded]!.handleIfDue(ev)) return;
    await this.sessions[out[0]!]!.acknowledge(ev);
  }

  /** A slice: the loaded context is switched out and the next live one in (the same one when it is alone). */
  private async rotate(): Promise<void> {
    const next = this.after(this.loaded);
    await this.sessions[this.loaded]!.switchOut();
    this.attribute(this.loaded);
    await this.enter(next);
  }

  /** The loaded context's workload exited: its stop and collection, then the next context. */
  private async finish(i: number, code: number): Promise<void> {
    const s = this.sessions[i]!;
    s.exitCode = code;
    const result = await s.stop(() => {
      this.attribute(i);
      return this.o.writtenNow ? { written: this.written[i]! } satisfies TargetFigures : {};
    });
    this.results[i] = { ...result, name: this.specs[i]!.name };
    this.live.delete(i);
    if (this.live.size > 0) await this.enter(this.after(i));
  }

  /** Loads context `i`: its first enable, or the restore of its saved state. */
  private async enter(i: number): Promise<void> {
    this.loaded = i;
    if (this.started.has(i)) {
      await this.sessions[i]!.switchIn();
    } else {
      this.started.add(i);
      await this.sessions[i]!.start(this.placements[i]);
      await this.execs[i]!.go(this.call);
    }
  }

  /** The live context after `i`, round robin (`i` itself, n steps on, when it is the only one). */
  private after(i: number): number {
    const n = this.specs.length;
    for (let k = 1; k <= n; k++) if (this.live.has((i + k) % n)) return (i + k) % n;
    // Stryker disable next-line all: unreachable: rotate calls this with `i` live, finish only while another is live
    throw new PtError('bad_state', 'no live context to run');
  }

  /** Bytes written since the last attribution belong to context `i` (its state was loaded). */
  private attribute(i: number): void {
    if (!this.o.writtenNow) return;
    const now = this.o.writtenNow();
    this.written[i]! += now - this.mark;
    this.mark = now;
  }
}
