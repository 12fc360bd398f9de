// The context a scenario runs in: the recorded target, the seeded workload,
// one driver trace run whose artifacts become the run directory, and the
// expectations and figures of result.json (docs/design.md "The run directory").
import type { TargetFigures } from '../../../driver/collect/collect.js';
import { imbalance, isLossless, lostBytes } from '../../../driver/collect/ledger.js';
import { CpuFaultError } from '../../../driver/hw/cpu-fault.js';
import { IA32_RTIT_CTL } from '../../../driver/hw/msrs.js';
import { PtError } from '../../../driver/base/errors.js';
import type { ProbeResult } from '../../../driver/probe.js';
import type { TopaPolicy, TraceOptions, TraceRequest } from '../../../driver/request.js';
import { TraceSession, type SessionOptions, type TraceResult } from '../../../driver/session.js';
import type { TargetEvent } from '../../../driver/target.js';
import type { Teardown } from '../../../driver/teardown.js';
import type { RecordingTarget } from '../../rundir/recording-target.js';
import type { Expectation, Figures } from '../../rundir/result.js';
import type { SimTarget } from '../../sim/sim-target.js';
import { generateWorkload, type GeneratedWorkload, type WorkloadOptions } from '../../sim/workload/index.js';
import { DEFAULT_BRANCHES, packetStats, timingVolume } from './helpers.js';
import { handlerOrderProblems } from './order-rules.js';
import { timesAgainstTruth } from './time-check.js';
import type { ScenarioEnv } from './scenario.js';
import type { TruthSelection } from '../../sim/trace/truth.js';

/** How a scenario runs its trace. */
export interface TraceOpts {
  readonly workload?: GeneratedWorkload;
  readonly sliceBranches?: number;
  /**
   * Sees every event first; returns true when it dealt with the event itself (the session does not
   * see it), or 'stop' to end the run there: the driver's stop sequence follows at once, as when a
   * user stops tracing while the event is still unhandled.
   */
  readonly intercept?: (ev: TargetEvent, s: TraceSession) => Promise<boolean | 'stop'>;
}

/** How the flow of the exported files must match truth.jsonl. */
/** Target calls and MSR batches (round trips with an rdmsr or wrmsr) of a part of a run. */
export interface TargetCalls {
  readonly roundTrips: number;
  readonly batches: number;
}

/** What ScenarioContext.expectPmiRecords checks beyond the records themselves. */
export interface PmiRecordChecks {
  /** Where the run's transcript starts (its refill notes are compared with the records). */
  readonly notesFrom?: number;
  /** The calls each handled PMI made, by record index, as the transcript saw them. */
  readonly calls?: readonly ({ readonly record: number } & TargetCalls)[];
  /** Upper bounds of a record's cost (see expectRecordCosts). */
  readonly most?: { readonly stop: TargetCalls; readonly handler?: TargetCalls };
  /** Prefix of each expectation ("context A"). */
  readonly label?: string;
}

export type FlowMatch =
  | 'equal'
  /** A lossy run: the flow before its first gap is a prefix of truth. */
  | 'prefix'
  /** A wrapped run: the flow after its last gap is a suffix of truth. */
  | 'suffix'
  /** Truth up to its final `disable` starts the flow (a model-only event ended tracing where the image has no instruction). */
  | 'until-disable';

export { DEFAULT_BRANCHES } from './helpers.js';

/** IA32_RTIT_CTL as transcript lines spell it. */
const CTL_HEX = `0x${IA32_RTIT_CTL.address.toString(16)}`;
const show = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `0x${x.toString(16)}` : x));

/** What `seededWorkload` must provide beyond the generator's options. */
export interface SeededWorkloadOptions extends WorkloadOptions {
  /** The path executes at least this many branches. */
  readonly minBranches?: number;
  /** A property the workload must have (e.g. an indirect branch on its path). */
  readonly where?: (w: GeneratedWorkload) => boolean;
}

/**
 * The workload of `seed` (DEFAULT_BRANCHES unless told). With `minBranches` or `where`, derived
 * seeds are tried in a fixed order until the path is at least that long and `where` holds, so
 * every seed gives a workload with what the scenario must provoke.
 */
export function seededWorkload(seed: number, o: SeededWorkloadOptions = {}): GeneratedWorkload {
  const { minBranches = 0, where = () => true, ...opts } = o;
  const branches = opts.branches ?? Math.max(DEFAULT_BRANCHES, 2 * minBranches);
  const fits = (x: GeneratedWorkload): boolean => x.model.branchCount >= minBranches && where(x);
  let w = generateWorkload(seed, { ...opts, branches });
  for (let k = 1; !fits(w) && k < 64; k++) {
    w = generateWorkload((seed * 31 + k) >>> 0, { ...opts, branches });
  }
  return w;
}

/** The branches of the ToPA PMI algorithm each policy can take (topa/policies.ts). */
const BRANCHES: Readonly<Record<TopaPolicy, readonly string[]>> = {
  grow: ['grow', 'chain'], chain: ['chain'], 'circular-fresh': ['circular-fresh'], 'protect-unread': ['protect-unread'],
  'single-entry': ['swap-region'], budget: ['grow', 'circularize', 'ring'],
};

/** Everything a scenario touches and records. */
export class ScenarioContext {
  readonly expectations: Expectation[] = [];
  readonly figures: Figures = {};
  /** The workload whose image goes to image.bin (the first one made). */
  workloadUsed: GeneratedWorkload | undefined;
  /** The request of the last trace run (image.json timing: its MTCFreq). */
  request: TraceRequest | undefined;
  /** The driver run whose stream and ledger go to trace.pt and losses.json. */
  result: TraceResult | undefined;
  /** The probe of the run (image.json cpuid14), also set by `probeOnly`. */
  probed: ProbeResult | undefined;
  /** Bytes of the SimPmiEvent skid (sim: bytes written between the PMI and the handler), per PMI. */
  readonly skids: number[] = [];
  /** Which truth lines go to truth.jsonl (several contexts on one CPU: the exported trace's own). Default all. */
  truthFilter: TruthSelection | undefined;
  /** Where the last trace run's records start in the model's truth (a scenario may trace more than once). */
  private truthFrom = 0;
  /** What each driver session's release did (TraceSession.release): the runner reports what was leaked. */
  readonly teardowns: Teardown[] = [];
  /** Run `ptlab flow` on the exported files and compare with truth.jsonl (a deferred expectation). */
  flowCheck: { readonly name: string; readonly mode: FlowMatch } | undefined;

  constructor(readonly env: ScenarioEnv, readonly target: RecordingTarget, readonly sim: SimTarget | undefined) {}

  /**
   * The seeded workload of this run (DEFAULT_BRANCHES unless told): `seededWorkload` of the run's
   * seed. The first one made goes to image.bin.
   */
  workload(o: SeededWorkloadOptions = {}): GeneratedWorkload {
    const w = seededWorkload(this.env.seed, o);
    this.workloadUsed ??= w;
    return w;
  }

  /**
   * A workload and request options that make at least `bytes` of output on this CPU: dense timing
   * packets where enumerated (about 3 bytes per branch and more), plain branches otherwise (at least
   * 0.3 bytes per branch: measured on generated workloads).
   */
  busy(bytes: number): { readonly workload: GeneratedWorkload; readonly extra: TraceOptions } {
    const extra = timingVolume(this.env.caps);
    const dense = Object.keys(extra).length > 0;
    return { workload: this.workload({ minBranches: Math.ceil(dense ? bytes / 3 : bytes / 0.3) }), extra };
  }

  /** Records one expectation. */
  expect(name: string, ok: boolean, detail: string): boolean {
    this.expectations.push({ name, ok, detail });
    return ok;
  }

  /** Expects `actual` to equal `want` (compared as JSON, bigint as hex). */
  expectEqual(name: string, actual: unknown, want: unknown): boolean {
    const a = show(actual), w = show(want);
    return this.expect(name, a === w, a === w ? `${a}` : `got ${a}, want ${w}`);
  }

  /** Sets a figure. */
  figure(name: string, value: number | string | boolean | null): void {
    this.figures[name] = value;
  }

  /** Expects `fn` to throw a #GP (CpuFaultError with vector #GP); returns the fault reason or undefined. */
  async expectGp(name: string, fn: () => Promise<unknown>): Promise<string | undefined> {
    try {
      await fn();
    } catch (e) {
      if (e instanceof CpuFaultError && e.vector === '#GP') { this.expect(name, true, e.message); return e.reason; }
      this.expect(name, false, `expected #GP, got ${(e as Error).name}: ${(e as Error).message}`);
      return undefined;
    }
    this.expect(name, false, 'expected #GP, the access completed');
    return undefined;
  }

  /** Expects `fn` to throw an error with `code` before any WRMSR reached the target. */
  async expectRefused(name: string, code: string, fn: () => Promise<unknown>): Promise<void> {
    const before = this.target.lines.filter((l) => l.op === 'wrmsr').length;
    try {
      await fn();
      this.expect(name, false, `expected a '${code}' error, the request was accepted`);
    } catch (e) {
      const got = (e as { code?: string }).code;
      const writes = this.target.lines.filter((l) => l.op === 'wrmsr').length - before;
      this.expect(name, got === code && writes === 0,
        `${got === code ? '' : `got code ${String(got)}: `}${(e as Error).message}; WRMSRs before the refusal: ${writes}`);
    }
  }

  /** One driver trace run (open → start → events → stop → collect → free); its artifacts go to the run directory. */
  async trace(req: TraceRequest, o: TraceOpts = {}): Promise<TraceResult> {
    const w = o.workload ?? this.workload();
    this.request = req;
    const sim = this.sim;
    // The model's CPU is stopped while the driver's handler runs (docs/design.md "How the model runs"): the
    // meter shows whether it retired a branch or wrote a byte in the window.
    const meter = sim ? { read: (cpu: number) => ({ branches: sim.retiredBranches(cpu), bytes: sim.written(cpu) }) } : undefined;
    const from = this.target.lines.length;
    const t0 = performance.now();
    const written0 = sim?.written(0) ?? 0, dropped0 = sim?.dropped(0) ?? 0;
    this.truthFrom = sim?.truthLog(0)?.length ?? 0;
    const storm = new PmiStormGuard();
    /** The target calls each PMI handed to the session made, as the transcript saw them. */
    const calls: { record: number; roundTrips: number; batches: number }[] = [];
    let stopCalls: TargetCalls | undefined;
    const s = await TraceSession.open(this.target, req, this.sessionOptions({ confineTo: w, ...(meter ? { meter, ...(o.sliceBranches ? { sliceBranches: o.sliceBranches } : {}) } : {}) }));
    this.probed = s.probed;
    this.figure('confinement', s.confinement);
    /** PMIs whose top half left the workload running while the driver handled them (TargetEvent `frozen`). */
    let unfrozen = 0, pmiEvents = 0;
    try {
      {
        await using exec = await s.launch(w, o.sliceBranches ? { sliceBranches: o.sliceBranches } : {});
        for await (const ev of exec.events) {
          const skid = (ev as { model?: { bytesSincePmi?: number } }).model?.bytesSincePmi;
          if (ev.kind === 'pmi' && skid !== undefined) this.skids.push(skid);
          if (ev.kind === 'pmi') { storm.see(s.plan.chunks.bytes); pmiEvents++; if (ev.frozen === false) unfrozen++; }
          const seen = o.intercept ? await o.intercept(ev, s) : false;
          if (seen === 'stop') break;
          if (seen) continue;
          const rt0 = this.target.roundTrips, line0 = this.target.lines.length, n0 = s.pmis.length;
          if (!(await s.onEvent(ev))) break;
          if (ev.kind === 'pmi' && s.pmis.length === n0 + 1) calls.push({ record: n0, roundTrips: this.target.roundTrips - rt0, batches: this.batchesSince(line0) });
        }
      }
      // What this run wrote and dropped: a scenario may trace more than once on one model CPU.
      const figures = (): TargetFigures => (sim ? { written: sim.written(0) - written0, dropped: sim.dropped(0) - dropped0 } : {});
      const rtStop = this.target.roundTrips, lineStop = this.target.lines.length;
      this.result = await s.stop(figures);
      stopCalls = { roundTrips: this.target.roundTrips - rtStop, batches: this.batchesSince(lineStop) };
    } finally {
      await s.release();
    }
    this.traceFigures(this.result);
    if (pmiEvents > 0) {
      this.expect('the workload made no progress while the driver handled a PMI (its top half froze the task)', unfrozen === 0,
        `${unfrozen} of ${pmiEvents} PMIs left the workload running on while the handler worked (docs/design.md "Realism")`);
    }
    this.expectConfined(w);
    this.expectLateEnable(from);
    this.expectHandlerOrder(from);
    this.expectTraceOffWindows(this.result, Math.ceil((performance.now() - t0) * 1000));
    this.expectPmiRecords(this.result, req, { notesFrom: from, calls, ...(stopCalls ? { most: { stop: stopCalls } } : {}) });
    return this.result;
  }

  /** MSR batches (round trips with an rdmsr or wrmsr line) among the transcript lines `line0` to `end` (excluded; default: the last). */
  batchesSince(line0: number, end = this.target.lines.length): number {
    const t = this.target;
    const trips = new Set<number>();
    for (let i = line0; i < end; i++) if (t.lines[i]!.op === 'rdmsr' || t.lines[i]!.op === 'wrmsr') trips.add(t.roundTripOf[i]!);
    return trips.size;
  }

  /**
   * The PMI records are what result.json and a lab's report say about each PMI, so they must agree
   * with what happened: a record claims a ToPA STOP or an operational error exactly where the
   * ledger has that loss; every refill names its branch of the SDM algorithm, one the request's
   * policy can take, with a `note` line in the transcript (`notesFrom`: where the run's transcript
   * starts; several contexts share one transcript, so they leave it out); and a record's target
   * calls and MSR batches are the ones the transcript shows for its handler (`calls`).
   */
  expectPmiRecords(r: TraceResult, req: TraceRequest, o: PmiRecordChecks = {}): void {
    const label = o.label ? `${o.label}: ` : '';
    const order = r.ledger.lost.findIndex((l, i) => i > 0 && l.at < r.ledger.lost[i - 1]!.at);
    this.expect(`${label}the loss ledger lists its losses in stream order`, order < 0, order < 0 ? `${r.ledger.lost.length} losses` : `loss ${order} at ${r.ledger.lost[order]!.at} after one at ${r.ledger.lost[order - 1]!.at}`);
    if (r.pmis.length === 0) return;
    const calls = o.calls ?? [];
    // A handler's claim must be a loss at its offset; the losses left over can only be the final
    // stop's own (one "stop" when it found Stopped, one "error" when it found Error).
    const unmatched = r.ledger.lost.filter((l) => l.reason === 'stop' || l.reason === 'error').map((l) => `${l.reason}@${l.at}`);
    const unclaimed: string[] = [];
    for (const p of r.pmis.filter((x) => x.action !== 'final-stop')) {
      for (const c of [...(p.stopped ? [`stop@${p.at}`] : []), ...(p.error ? [`error@${p.at}`] : [])]) {
        const i = unmatched.indexOf(c);
        if (i < 0) unclaimed.push(c); else unmatched.splice(i, 1);
      }
    }
    const byFinal = unmatched.filter((u) => (u.startsWith('stop@') ? r.final.stopped : r.final.error));
    this.expect(`${label}every STOP or error a PMI record claims is a loss in the ledger at its offset, and the final stop found any other`,
      unclaimed.length === 0 && byFinal.length === unmatched.length && byFinal.length <= 2,
      `claims without a loss: ${JSON.stringify(unclaimed)}; losses no record claims: ${JSON.stringify(unmatched)}`);
    const refills = r.pmis.filter((p) => (p.action === 'handled' || p.action === 'handled-saved') && !p.error);
    const allowed = req.output.scheme === 'topa' ? BRANCHES[req.output.policy] : [];
    const branches = refills.map((p) => p.branch ?? '(none)');
    const notes = o.notesFrom === undefined ? undefined
      : this.target.lines.slice(o.notesFrom).filter((l) => l.op === 'note' && l.value?.startsWith('pmi: ')).map((l) => l.value!.slice(5));
    this.expect(`${label}every refill names a branch its policy takes (${allowed.join(', ')})${notes ? ', noted in the transcript' : ''}`,
      branches.every((b) => allowed.includes(b)) && (notes === undefined || JSON.stringify(notes) === JSON.stringify(branches)),
      `records ${[...new Set(branches)].join(',') || '-'} (${branches.length})${notes ? `; notes ${notes.length}` : ''}`);
    if (o.most) this.expectRecordCosts(r, o.most, label);
    if (o.calls === undefined) return;
    const off = calls.filter((c) => r.pmis[c.record]!.roundTrips !== c.roundTrips || r.pmis[c.record]!.batches !== c.batches);
    this.expect(`${label}each PMI record counts the target calls and MSR batches its handler made`, off.length === 0,
      off.length ? off.slice(0, 3).map((c) => `PMI ${c.record}: recorded ${r.pmis[c.record]!.roundTrips}/${r.pmis[c.record]!.batches}, transcript ${c.roundTrips}/${c.batches}`).join('; ') : `${calls.length} PMIs`);
  }

  /**
   * A PMI record's cost is report-only, but a lab compares it across drivers and CPUs: every record
   * made no more MSR batches than target calls, and no more of either than the transcript shows for
   * the part of the run it covers (`most.stop`: the stop's; `most.handler`: the most the handling of
   * any one PMI made, when records cannot be matched to their PMI one by one).
   */
  private expectRecordCosts(r: TraceResult, most: NonNullable<PmiRecordChecks['most']>, label: string): void {
    const over = r.pmis.filter((p) => {
      const cap = p.action === 'final-stop' ? most.stop : most.handler;
      return p.batches > p.roundTrips || (cap !== undefined && (p.roundTrips > cap.roundTrips || p.batches > cap.batches));
    });
    const caps = `the stop made ${most.stop.roundTrips}/${most.stop.batches}${most.handler ? `, a PMI's handling at most ${most.handler.roundTrips}/${most.handler.batches}` : ''}`;
    this.expect(`${label}no PMI record counts more target calls or MSR batches than its part of the run made`, over.length === 0,
      over.length ? `${over.slice(0, 3).map((p) => `${p.action}: ${p.roundTrips}/${p.batches}`).join('; ')}; ${caps}` : `${r.pmis.length} records; ${caps}`);
  }

  /**
   * After every trace run that took a ToPA PMI: the handler kept the SDM's order (order-rules.ts),
   * read from the transcript, so the check means the same on real hardware.
   */
  expectHandlerOrder(from = 0): void {
    const lines = this.target.lines.slice(from);
    if (!lines.some((l) => l.op === 'pmi')) return;
    const bad = handlerOrderProblems(lines);
    this.expect('the PMI handler kept the SDM order: refill before CTL is restored, [55] acknowledged, LVT unmasked last, no needless MSR write',
      bad.length === 0, bad.length ? bad.slice(0, 3).map((p) => `${p.rule}: ${p.detail}`).join('; ') + (bad.length > 3 ? ` (+${bad.length - 3} more)` : '') : `${lines.filter((l) => l.op === 'pmi').length} PMIs`);
  }

  /**
   * Every handled PMI measured how long tracing was off; on the model, which stops the CPU while the
   * handler runs (DESIGN "How the model runs"), nothing may have been written in those windows.
   */
  expectTraceOffWindows(r: TraceResult, runUs: number, o: { readonly metered?: boolean; readonly label?: string } = {}): void {
    const handled = r.pmis.filter((p) => p.action === 'handled');
    if (handled.length === 0) return;
    // Runs without a meter (every real target) measure host time only.
    const metered = o.metered ?? this.sim !== undefined;
    // A handler takes time (more than a microsecond), and no window is longer than the whole run.
    const measured = handled.filter((p) => p.window !== undefined && p.window.us > 0 && p.window.us <= runUs && (p.window.model !== undefined) === metered);
    const moved = handled.reduce((a, p) => a + Math.abs(p.window?.model?.bytes ?? NaN) + Math.abs(p.window?.model?.branches ?? NaN), 0);
    this.expect(`${o.label ? `${o.label}: ` : ''}every handled PMI measured its trace-off window${metered ? ', and the stopped model retired and wrote nothing in it' : ' (host time: no meter)'}`,
      measured.length === handled.length && (!metered || moved === 0),
      `${measured.length} of ${handled.length} windows measured within the run's ${runUs} µs; ${metered ? `${moved} branches and bytes in the windows` : 'no meter'}`);
  }

  /**
   * `o` with the run's driver faults (negative controls of the driver), its abort signal and the
   * teardown record (`teardowns`), for every session a scenario opens.
   */
  sessionOptions(o: SessionOptions = {}): SessionOptions {
    const onTeardown = (t: Teardown): void => { this.teardowns.push(t); o.onTeardown?.(t); };
    const signal = o.signal ?? this.env.signal;
    return { ...o, onTeardown, ...(signal ? { signal } : {}), ...(this.env.driverFaults?.size ? { faults: this.env.driverFaults } : {}) };
  }

  /** Records the standard figures of a trace run (result.json `figures`). */
  private traceFigures(r: TraceResult): void {
    const handled = r.pmis.filter((p) => p.action === 'handled');
    const windows = r.pmis.flatMap((p) => (p.window ? [p.window] : []));
    this.figure('bytes', r.stream.length);
    this.figure('packets', packetStats(r.stream).total);
    if (r.ledger.written !== undefined) this.figure('written', r.ledger.written);
    if (r.ledger.dropped !== undefined) this.figure('dropped', r.ledger.dropped);
    this.figure('lostBytes', lostBytes(r.ledger));
    this.figure('losses', r.ledger.lost.length);
    this.figure('pmis', r.pmis.length);
    this.figure('pmisHandled', handled.length);
    this.figure('roundTripsPerPmi', r.pmis.length ? round2(r.pmis.reduce((a, p) => a + p.roundTrips, 0) / r.pmis.length) : null);
    this.figure('batchesPerPmi', r.pmis.length ? round2(r.pmis.reduce((a, p) => a + p.batches, 0) / r.pmis.length) : null);
    this.figure('traceOffWindows', windows.length);
    this.figure('traceOffMaxUs', windows.length ? Math.max(...windows.map((x) => x.us)) : null);
    this.figure('traceOffModelBytes', windows.reduce((a, x) => a + (x.model?.bytes ?? 0), 0));
    this.figure('pmiSkidMaxBytes', this.skids.length ? Math.max(...this.skids) : null);
    this.figure('switches', r.switches);
  }

  /**
   * The standard expectations of a trace run that should lose nothing: the ledger balances, nothing
   * is lost, every branch of the workload was traced (unless `partial`), and `ptlab flow` on the
   * exported files reproduces truth.jsonl.
   */
  expectLossless(r: TraceResult, o: { partial?: boolean } = {}): void {
    const imb = imbalance(r.ledger);
    this.expect('ledger balances', imb === 0 || imb === undefined,
      `written ${r.ledger.written ?? '?'} = collected ${r.ledger.collected} + lost ${lostBytes(r.ledger)}${imb ? ` (off by ${imb})` : ''}`);
    this.expect('lossless: no lost entries, no OVF', isLossless(r.ledger), `lost ${show(r.ledger.lost)}`);
    if (!o.partial && this.sim && this.workloadUsed) this.expectAllTraced();
    this.expectFlowEqualsTruth();
  }

  /**
   * The trace is the workload's (docs/design.md "Realism", sim only): no branch recorded in the last
   * trace run's truth lies outside the workload's image — other code on the CPU was filtered out.
   */
  expectConfined(w: GeneratedWorkload): void {
    const log = this.sim?.truthLog(0);
    if (!log) return;
    const lo = Number(w.base), hi = lo + w.image.length;
    let outside = 0, first: number | undefined;
    for (let i = this.truthFrom; i < log.length; i++) {
      if (!log.isBranch(i)) continue;
      const ip = log.ipOf(i);
      if (ip !== undefined && (ip < lo || ip >= hi)) { outside++; first ??= ip; }
    }
    this.expect('the trace is the workload\'s: every traced branch lies in its image', outside === 0,
      outside ? `${outside} traced branches outside [0x${lo.toString(16)}, 0x${hi.toString(16)}), the first at 0x${BigInt.asUintN(64, BigInt(first!)).toString(16)}` : `image [0x${lo.toString(16)}, 0x${hi.toString(16)})`);
  }

  /**
   * The late enable (docs/design.md "Realism"), from the transcript, so it means the same on every
   * target: the workload was started held, the enable's CTL write with TraceEn=1 came once it waited
   * at its entry (`placed`) and before it was let go (`go`). What loaded it was then never traced.
   */
  expectLateEnable(from: number): void {
    const lines = this.target.lines.slice(from);
    const start = lines.find((l) => l.op === 'start');
    const placed = lines.find((l) => l.op === 'placed' && l.exec === start?.exec);
    const go = lines.find((l) => l.op === 'go' && l.exec === start?.exec);
    const enable = lines.find((l) => l.op === 'wrmsr' && l.msr === CTL_HEX && (BigInt(l.value ?? '0') & 1n) === 1n && l.fault === undefined);
    const ok = start?.held === true && placed !== undefined && enable !== undefined && go !== undefined && placed.seq < enable.seq && enable.seq < go.seq;
    const at = (l: { seq: number } | undefined): string => (l ? String(l.seq) : 'none');
    this.expect('TraceEn was set only once the workload waited at its entry (started held, enabled, then let go)', ok,
      `start ${at(start)}${start?.held ? ' (held)' : ''}, placed ${at(placed)}, CTL with TraceEn=1 ${at(enable)}, go ${at(go)}`);
  }

  /**
   * Expects `ptlab flow --time` of the last trace run to date every record within the tolerance of
   * docs/sdm/packets.md §13.1 of the truth's retirement TSC (sim only: truth holds the times).
   */
  expectTimesFollowTruth(r: TraceResult, ctl: { readonly MTCFreq: number; readonly CYCEn?: boolean }): void {
    const w = this.workloadUsed, log = this.sim?.truthLog(0);
    if (!this.sim || !w || !log) return;
    const c = timesAgainstTruth(r.stream, w, log, this.truthFrom, this.sim.clockOf(0), ctl);
    this.expect(`flow --time dates every record at most ${c.tolerance} TSC ticks behind the truth, and before its TNT was written (docs/sdm/packets.md §13.1)`, c.ok, c.detail);
  }

  /** Expects the last trace run's truth to hold every branch of the workload's path (tracing was never off in between). */
  expectAllTraced(): void {
    const w = this.workloadUsed;
    if (!this.sim || !w) return;
    const branches = this.sim.truthLog(0)?.branches({ from: this.truthFrom }) ?? 0;
    this.expect('every branch of the workload was traced', branches === w.model.branchCount,
      `truth has ${branches} branch records, the workload retires ${w.model.branchCount}`);
  }

  /**
   * Registers the deferred expectation on the exported files (sim only): `ptlab flow` equals
   * truth.jsonl; or, on a lossy run, the flow before its first gap is a prefix of truth ('prefix'),
   * or the flow after its last gap is a suffix of truth ('suffix').
   */
  expectFlowEqualsTruth(name = 'ptlab flow on the exported files equals truth.jsonl', mode: FlowMatch = 'equal'): void {
    if (this.sim) this.flowCheck = { name, mode };
  }
}

/**
 * Ends a run that takes far more PMIs than its output explains: a broken handler (PendTopaPMI left
 * set re-raises the PMI at every restore: docs/sdm/output.md §7.4) would otherwise loop until memory ran
 * out. A sound run has at most one ToPA PMI per INT region, and no scenario's INT regions are
 * smaller than 4 KiB, so one PMI per KiB plus a few is already four times too many.
 */
class PmiStormGuard {
  private pmis = 0;

  see(bytesAccounted: number): void {
    this.pmis++;
    if (this.pmis > 16 + bytesAccounted / 1024) {
      throw new PtError('bad_state', `PMI storm: ${this.pmis} PMIs for ${bytesAccounted} bytes of output (is PendTopaPMI left set? docs/sdm/output.md §7.4)`);
    }
  }
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
