// Runs a checked Sequence on a target, step by step: each checked step adds one expectation named
// by its file:line (result.json), a #GP is data where the step expects it, and anything else that
// throws ends the sequence with a failed "ran to its end" expectation.
import { PtError } from '../../driver/base/errors.js';
import { hex } from '../../driver/base/hex.js';
import { CpuFaultError } from '../../driver/hw/cpu-fault.js';
import { PT_STATE_BIT } from '../../driver/hw/xsave.js';
import { TOPA_ENTRY_BYTES, topaEntry } from '../../driver/hw/topa.js';
import type { Execution, PhysRegion, Target, TargetEvent } from '../../driver/target.js';
import type { ResultJson } from '../report/result.js';
import { generateWorkload, type GeneratedWorkload } from '../sim/workload/index.js';
import { collectOutput, type BuiltTable } from './collect.js';
import { formatPos } from './errors.js';
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

interface Running {
  readonly ex: Execution;
  readonly it: AsyncIterator<TargetEvent>;
  branches: number;
}

/** Runs `seq` on `t`; `seed` (--seed, else the file's seed:, else 1) is the seed of `run` steps without one. */
export async function runSequence(seq: Sequence, t: Target, seed: number): Promise<SeqOutcome> {
  const r = new SeqRun(t, seed);
  try {
    for (const s of seq.steps) await r.step(s);
  } catch (e) {
    r.expect(r.current, 'the sequence ran to its end', false, `${(e as Error).name}: ${(e as Error).message}`);
  } finally {
    await r.stop();
  }
  return { expectations: r.expectations, trace: r.trace(), workload: r.workload, pmis: r.pmis };
}

class SeqRun {
  readonly expectations: Expectation[] = [];
  private readonly regions = new Map<string, PhysRegion>();
  private readonly tables: (BuiltTable & { name: string })[] = [];
  private readonly areas = new Map<string, Uint8Array>();
  private readonly collected: Uint8Array[] = [];
  private running: Running | undefined;
  workload: GeneratedWorkload | undefined;
  pmis = 0;
  /** The step running now (where a thrown error is reported). */
  current: Step | undefined;

  constructor(private readonly t: Target, private readonly seed: number) {}

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

  async stop(): Promise<void> {
    const r = this.running;
    this.running = undefined;
    if (r) await r.ex[Symbol.asyncDispose]();
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
      case 'pmi-enable':
        await this.t.pmiEnable(s.cpu);
        return;
      case 'run':
        return this.run(s);
      case 'wait-pmi':
        return this.waitPmi(s);
      case 'collect': {
        const c = await collectOutput(this.t, s.cpu, this.tables);
        this.collected.push(c.bytes);
        const n = c.bytes.length;
        if (s.bytes !== undefined) this.expect(s, `${s.bytes} bytes`, n === s.bytes, c.how);
        else if (s.minBytes !== undefined) this.expect(s, `at least ${s.minBytes} bytes`, n >= s.minBytes, c.how);
        else if (s.packets === undefined) this.expect(s, 'the output', true, c.how);
        if (s.packets !== undefined) {
          const j = judgePackets(countPackets(c.bytes), s.packets);
          this.expect(s, 'packets', j.ok, `${j.detail} in ${n} bytes`);
        }
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

  private async run(s: Extract<Step, { kind: 'run' }>): Promise<void> {
    if (!this.running || s.seed !== undefined || s.branches !== undefined) {
      await this.stop();
      const w = generateWorkload(s.seed ?? this.seed, s.branches === undefined ? {} : { branches: s.branches });
      this.workload ??= w;
      const ex = this.t.start(w, s.cpu, s.sliceBranches === undefined ? {} : { sliceBranches: s.sliceBranches });
      this.running = { ex, it: ex.events[Symbol.asyncIterator](), branches: 0 };
    }
    const r = this.running!;
    let slices = 0, pmis = 0;
    const want = s.expect ?? (s.slices !== undefined ? 'slices' : 'exit');
    for (;;) {
      const n = await r.it.next();
      if (n.done) { await this.stop(); this.expect(s, `ran to ${want}`, want === 'exit', `the execution ended without an exit event (${pmis} PMI(s))`); return; }
      const ev = n.value;
      if (ev.kind === 'fault') throw ev.error;
      if (ev.kind === 'pmi') { pmis++; this.pmis++; continue; }
      if (ev.kind === 'exit') {
        await this.stop();
        this.expect(s, `ran to ${want}`, want === 'exit', `the workload exited (code ${ev.code}) after ${slices} slice(s), ${pmis} PMI(s)`);
        return;
      }
      slices++;
      r.branches = ev.branches;
      if (s.slices !== undefined && slices >= s.slices) {
        this.expect(s, `ran to ${want}`, want === 'slices', `${slices} slice(s), ${ev.branches} branches, ${pmis} PMI(s); the workload is suspended`);
        return;
      }
    }
  }

  private async waitPmi(s: Extract<Step, { kind: 'wait-pmi' }>): Promise<void> {
    const r = this.running;
    if (!r) { this.expect(s, s.expect === 'pmi' ? 'a PMI' : 'no PMI', s.expect === 'none', 'no workload is running (a run step with slices leaves one suspended)'); return; }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((res) => { timer = setTimeout(() => res('timeout'), s.timeoutMs); });
    try {
      for (;;) {
        const n = await Promise.race([r.it.next(), timeout]);
        if (n === 'timeout') { this.expect(s, s.expect === 'pmi' ? 'a PMI' : 'no PMI', s.expect === 'none', `no PMI within ${s.timeoutMs} ms`); return; }
        if (n.done || n.value.kind === 'exit') {
          await this.stop();
          this.expect(s, s.expect === 'pmi' ? 'a PMI' : 'no PMI', s.expect === 'none', 'the workload exited without a PMI');
          return;
        }
        const ev = n.value;
        if (ev.kind === 'fault') throw ev.error;
        if (ev.kind === 'pmi') {
          this.pmis++;
          this.expect(s, s.expect === 'pmi' ? 'a PMI' : 'no PMI', s.expect === 'pmi', `PMI: GLOBAL_STATUS ${hex(ev.globalStatus)}, STATUS ${hex(ev.status)}`);
          return;
        }
      }
    } finally {
      clearTimeout(timer);
    }
  }
}
