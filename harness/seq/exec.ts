// Runs a checked Sequence on a target, step by step: each checked step adds one expectation named
// by its file:line (result.json), a #GP is data where the step expects it, and anything else that
// throws ends the sequence with a failed "ran to its end" expectation.
import { PtError } from '../../driver/base/errors.js';
import { hex } from '../../driver/base/hex.js';
import { CpuFaultError } from '../../driver/hw/cpu-fault.js';
import { PT_STATE_BIT } from '../../driver/hw/xsave.js';
import { TOPA_ENTRY_BYTES, topaEntry } from '../../driver/hw/topa.js';
import type { PhysRegion, Target } from '../../driver/target.js';
import type { ResultJson } from '../rundir/result.js';
import type { GeneratedWorkload } from '../sim/workload/index.js';
import type { Loss } from '../../driver/collect/ledger.js';
import type { PmiEvent } from '../../driver/pmi/handler.js';
import { collectOutput, type BuiltTable } from './collect.js';
import { formatPos } from './errors.js';
import { judgeFlow } from './flow.js';
import { judgeHandled, SeqTrace } from './trace-run.js';
import { SeqWorkloads } from './workload.js';
import { countPackets, judgePackets } from './packets.js';
import { judgeCpuid, judgeRead, type Judged } from './judge.js';
import type { Sequence, Step } from './model.js';

/** One line of result.json `expectations`. */
export type Expectation = ResultJson['expectations'][number];

/** What running a sequence leaves for its run directory. */
export interface SeqOutcome {
  readonly expectations: Expectation[];
  /** trace.pt: every `collect`, in order; undefined when nothing was collected. */
  readonly trace: Uint8Array | undefined;
  /** The first workload run (image.bin). */
  readonly workload: GeneratedWorkload | undefined;
  readonly pmis: number;
}

/** The rule id a #GP names: its reason starts with it ("CTL.2: reserved bit 18 set"). */
export function ruleOf(e: CpuFaultError): string {
  return e.fault.reason.split(':')[0]!.trim();
}

/** What a sequence's run has besides its target. */
export interface SeqRunOptions {
  /** The reference model's truth.jsonl lines of CPU 0 so far (where the model is the PT unit): what `flow: truth` compares with. */
  readonly truth?: () => readonly string[];
}

/** Runs `seq` on `t`; `seed` (--seed, else the file's seed:, else 1) is the seed of `run` steps without one. */
export async function runSequence(seq: Sequence, t: Target, seed: number, o: SeqRunOptions = {}): Promise<SeqOutcome> {
  const r = new SeqRun(t, seed, o.truth);
  try {
    for (const s of seq.steps) await r.step(s);
  } catch (e) {
    r.expect(r.current, 'the sequence ran to its end', false, `${(e as Error).name}: ${(e as Error).message}`);
  } finally {
    await r.finish();
  }
  return { expectations: r.expectations, trace: r.trace(), workload: r.workloads.first, pmis: r.workloads.pmis };
}

class SeqRun {
  readonly expectations: Expectation[] = [];
  private readonly regions = new Map<string, PhysRegion>();
  private readonly tables: (BuiltTable & { name: string })[] = [];
  private readonly areas = new Map<string, Uint8Array>();
  private readonly collected: Uint8Array[] = [];
  readonly workloads: SeqWorkloads;
  /** The driver's trace session, from a `trace` step to the `collect` that ends it. */
  private traced: SeqTrace | undefined;
  /** The PMI the last `wait-pmi` met, until a `handle-pmi` hands it to the driver. */
  private lastPmi: PmiEvent | undefined;
  /** Truth lines since the previous `collect` (what `flow: truth` compares). */
  private truthFrom = 0;
  /** The step running now (where a thrown error is reported). */
  current: Step | undefined;

  constructor(private readonly t: Target, seed: number, private readonly truth: (() => readonly string[]) | undefined) {
    this.workloads = new SeqWorkloads(t, seed);
  }

  /** One expectation, named "file:line kind what". */
  expect(s: Step | undefined, what: string, ok: boolean, detail: string): void {
    const where = s ? `${formatPos(s.at).replace(/:\d+$/, '')} ${s.kind} ` : '';
    this.expectations.push({ name: `${where}${what}`, ok, detail });
  }

  judged(s: Step, j: Judged): void {
    this.expect(s, j.what, j.ok, j.detail);
  }

  trace(): Uint8Array | undefined {
    if (this.collected.length === 0) return undefined;
    return Buffer.concat(this.collected);
  }

  /** At the end of the sequence: the workload stopped, a trace session not collected ended (TraceEn=0, regions freed). */
  async finish(): Promise<void> {
    await this.workloads.stop();
    const tr = this.traced;
    this.traced = undefined;
    await tr?.abandon();
  }

  async step(s: Step): Promise<void> {
    this.current = s;
    this.t.note?.(0, `${formatPos(s.at)} ${s.kind}`);
    switch (s.kind) {
      case 'cpuid': {
        const regs = await this.t.cpuid(s.leaf, s.subleaf, s.cpu);
        if (s.expect) this.judged(s, judgeCpuid(s.leaf, s.subleaf, regs, s.expect));
        return;
      }
      case 'rdmsr': {
        let v: bigint;
        try {
          v = await this.t.rdmsr(s.cpu, s.msr.address);
        } catch (e) {
          if (!(e instanceof CpuFaultError)) throw e;
          if (s.expect?.kind === 'gp') return this.gp(s, s.msr.label, e, s.expect.rule);
          this.expect(s, s.msr.label, false, `unexpected ${e.message}`);
          return;
        }
        if (s.expect) this.judged(s, judgeRead(s.msr, s.expect, v, (n) => this.baseOf(n)));
        return;
      }
      case 'wrmsr': {
        const value = s.value.kind === 'raw' ? s.value.value : this.baseOf(s.value.name);
        const what = `${s.msr.label} ← ${s.text}${s.value.kind === 'buffer' ? ` = ${hex(value)}` : ''}`;
        try {
          await this.t.wrmsr(s.cpu, s.msr.address, value);
        } catch (e) {
          if (!(e instanceof CpuFaultError)) throw e;
          if (s.expect === 'gp') return this.gp(s, what, e, s.rule);
          this.expect(s, what, false, `expected the write to succeed; ${e.message}`);
          return;
        }
        this.expect(s, what, s.expect === 'ok', s.expect === 'ok' ? 'written' : `expected #GP${s.rule ? ` (${s.rule})` : ''}; the write succeeded`);
        return;
      }
      case 'alloc':
        this.regions.set(s.name, await this.t.phys.alloc(s.size, s.align));
        return;
      case 'topa': {
        const bytes = Math.max(4096, Math.ceil((s.entries.length * TOPA_ENTRY_BYTES) / 4096) * 4096);
        const region = await this.t.phys.alloc(bytes, 4096);
        this.regions.set(s.name, region);
        const entries = s.entries.map((e) => (e.kind === 'end'
          ? topaEntry({ base: this.baseOf(e.table), end: true })
          : topaEntry({ base: this.baseOf(e.buffer), size: this.regions.get(e.buffer)!.size, int: e.int, stop: e.stop })));
        const data = new Uint8Array(entries.length * TOPA_ENTRY_BYTES);
        const dv = new DataView(data.buffer);
        entries.forEach((e, i) => dv.setBigUint64(i * TOPA_ENTRY_BYTES, e, true));
        await this.t.phys.write(region.base, data, { content: 'topa-table' });
        this.tables.push({ name: s.name, base: region.base, entries });
        return;
      }
      case 'trace':
        if (this.traced) throw new PtError('bad_state', `a trace session is already open (the trace at line ${this.traced.step.at.line})`);
        this.traced = await SeqTrace.open(this.t, s);
        return;
      case 'handle-pmi':
        return this.handlePmi(s);
      case 'pmi-enable':
        await this.t.pmiEnable(s.cpu);
        return;
      case 'run': {
        // The driver owns the output of a trace session: its handler takes every PMI a run meets (as TraceSession.run does).
        const tr = this.traced;
        this.judged(s, await this.workloads.run(s, tr ? async (ev) => (await tr.handle(ev)).branch ?? 'no refill' : undefined));
        return;
      }
      case 'wait-pmi': {
        const w = await this.workloads.waitPmi(s);
        if (w.pmi) this.lastPmi = w.pmi;
        this.judged(s, w.judged);
        return;
      }
      case 'collect': {
        const c = await this.collect(s.cpu);
        this.collected.push(c.bytes);
        const n = c.bytes.length;
        if (s.bytes !== undefined) this.expect(s, `${s.bytes} bytes`, n === s.bytes, c.how);
        else if (s.minBytes !== undefined) this.expect(s, `at least ${s.minBytes} bytes`, n >= s.minBytes, c.how);
        else if (s.packets === undefined) this.expect(s, 'the output', true, c.how);
        if (s.packets !== undefined) {
          const j = judgePackets(countPackets(c.bytes), s.packets);
          this.expect(s, 'packets', j.ok, `${j.detail} in ${n} bytes`);
        }
        const truth = this.truth?.() ?? [];
        if (s.flow !== undefined) {
          if (!this.truth) this.expect(s, 'flow = truth', false, 'this target has no reference model, so no truth');
          else this.judged(s, judgeFlow(c.bytes, this.workloads.since, c.lost, truth.slice(this.truthFrom)));
        }
        this.truthFrom = truth.length;
        this.workloads.since = [];
        return;
      }
      case 'xsaves': {
        try {
          this.areas.set(s.area, await this.t.xsaves(s.cpu, PT_STATE_BIT));
        } catch (e) {
          if (!(e instanceof CpuFaultError)) throw e;
          if (s.expect === 'gp') return this.gp(s, s.area, e, undefined);
          this.expect(s, s.area, false, `expected XSAVES to succeed; ${e.message}`);
          return;
        }
        this.expect(s, s.area, s.expect === 'ok', s.expect === 'ok' ? `saved ${this.areas.get(s.area)!.length} bytes` : 'expected #GP; XSAVES succeeded');
        return;
      }
      case 'xrstors': {
        try {
          await this.t.xrstors(s.cpu, this.areas.get(s.area)!, PT_STATE_BIT);
        } catch (e) {
          if (!(e instanceof CpuFaultError)) throw e;
          if (s.expect === 'gp') return this.gp(s, s.area, e, s.rule);
          this.expect(s, s.area, false, `expected XRSTORS to succeed; ${e.message}`);
          return;
        }
        this.expect(s, s.area, s.expect === 'ok', s.expect === 'ok' ? 'restored' : 'expected #GP; XRSTORS succeeded');
        return;
      }
      case 'repeat':
        for (let i = 0; i < s.times; i++) for (const x of s.steps) await this.step(x);
        return;
    }
  }

  /** The output so far: the driver's collection while a trace session is open (it ends the session), else the pointers' walk of the tables built by hand. */
  private async collect(cpu: number): Promise<{ bytes: Uint8Array; how: string; lost: readonly Loss[] }> {
    const tr = this.traced;
    if (!tr) return { ...(await collectOutput(this.t, cpu, this.tables)), lost: [] };
    this.traced = undefined;
    return tr.collect();
  }

  /** The driver's handler for the PMI the last wait-pmi met. */
  private async handlePmi(s: Extract<Step, { kind: 'handle-pmi' }>): Promise<void> {
    const ev = this.lastPmi, tr = this.traced;
    const what = s.expect.branch === undefined ? s.expect.action : `${s.expect.action} ${s.expect.branch}`;
    if (!tr) throw new PtError('bad_state', 'no trace session is open');
    if (!ev) { this.expect(s, what, false, 'no PMI to handle: the last wait-pmi met none, or it was handled already'); return; }
    this.lastPmi = undefined;
    this.judged(s, judgeHandled(await tr.handle(ev), s.expect));
  }

  /** An expected #GP: it must name `rule` when one is given. */
  private gp(s: Step, what: string, e: CpuFaultError, rule: string | undefined): void {
    const got = ruleOf(e);
    const ok = e.vector === '#GP' && (rule === undefined || rule === got);
    this.expect(s, `${what} raises #GP${rule ? ` (${rule})` : ''}`, ok, e.message);
  }

  private baseOf(name: string): bigint {
    const r = this.regions.get(name);
    if (!r) throw new PtError('bad_state', `${name} was never allocated (its alloc or topa step did not run)`);
    return r.base;
  }
}
