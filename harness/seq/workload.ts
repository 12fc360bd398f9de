// The workload of a sequence (docs/formats/seq.md "run", "wait-pmi"): generated from a seed as the
// scenarios' are, started on the target, driven event by event — to its exit, for some slices
// (then suspended), or to its next PMI — and stopped when a new one starts or the sequence ends.
import { hex } from '../../driver/base/hex.js';
import type { PmiEvent } from '../../driver/pmi/handler.js';
import type { Execution, Target, TargetEvent } from '../../driver/target.js';
import { generateWorkload, type GeneratedWorkload } from '../sim/workload/index.js';
import type { Judged } from './judge.js';
import type { Step } from './model.js';

interface Running {
  readonly ex: Execution;
  readonly it: AsyncIterator<TargetEvent>;
}

/** What to do with a PMI a `run` meets: nothing (it is counted), or hand it to the driver's handler (returns the branch taken). */
export type OnPmi = ((ev: PmiEvent) => Promise<string>) | undefined;

/** The workloads of one sequence on one target. */
export class SeqWorkloads {
  private running: Running | undefined;
  /** The first workload run. */
  first: GeneratedWorkload | undefined;
  /** Every workload started since `since` was last cleared (the previous collect). */
  since: GeneratedWorkload[] = [];
  /** PMIs met by `run` and `wait-pmi` steps. */
  pmis = 0;

  constructor(private readonly t: Target, private readonly seed: number) {}

  /** Stops the suspended workload, if there is one. */
  async stop(): Promise<void> {
    const r = this.running;
    this.running = undefined;
    if (r) await r.ex[Symbol.asyncDispose]();
  }

  /** A `run` step: a new workload (or the suspended one) to its exit or through its slices; `onPmi` says what PMIs on the way get. */
  async run(s: Extract<Step, { kind: 'run' }>, onPmi: OnPmi): Promise<Judged> {
    if (!this.running || s.seed !== undefined || s.branches !== undefined) {
      await this.stop();
      const w = generateWorkload(s.seed ?? this.seed, s.branches === undefined ? {} : { branches: s.branches });
      this.first ??= w;
      this.since.push(w);
      const ex = this.t.start(w, s.cpu, s.sliceBranches === undefined ? {} : { sliceBranches: s.sliceBranches });
      this.running = { ex, it: ex.events[Symbol.asyncIterator]() };
    }
    const r = this.running!;
    let slices = 0, pmis = 0;
    const branches: string[] = [];
    const pmiText = (): string => `${pmis} PMI(s)${onPmi ? ` handled by the driver${branches.length ? ` (${branches.join(', ')})` : ''}` : ''}`;
    const want = s.expect ?? (s.slices !== undefined ? 'slices' : 'exit');
    const what = `ran to ${want}`;
    for (;;) {
      const n = await r.it.next();
      if (n.done) { await this.stop(); return { what, ok: want === 'exit', detail: `the execution ended without an exit event (${pmiText()})` }; }
      const ev = n.value;
      if (ev.kind === 'fault') throw ev.error;
      if (ev.kind === 'pmi') {
        pmis++; this.pmis++;
        if (onPmi) branches.push(await onPmi(ev));
        continue;
      }
      if (ev.kind === 'exit') {
        await this.stop();
        return { what, ok: want === 'exit', detail: `the workload exited (code ${ev.code}) after ${slices} slice(s), ${pmiText()}` };
      }
      slices++;
      if (s.slices !== undefined && slices >= s.slices) {
        return { what, ok: want === 'slices', detail: `${slices} slice(s), ${ev.branches} branches, ${pmiText()}; the workload is suspended` };
      }
    }
  }

  /** A `wait-pmi` step: the suspended workload to its next PMI (returned, left as delivered), its exit, or the timeout. */
  async waitPmi(s: Extract<Step, { kind: 'wait-pmi' }>): Promise<{ readonly judged: Judged; readonly pmi?: PmiEvent }> {
    const what = s.expect === 'pmi' ? 'a PMI' : 'no PMI';
    const none = (detail: string): { judged: Judged } => ({ judged: { what, ok: s.expect === 'none', detail } });
    const r = this.running;
    if (!r) return none('no workload is running (a run step with slices leaves one suspended)');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((res) => { timer = setTimeout(() => res('timeout'), s.timeoutMs); });
    try {
      for (;;) {
        const n = await Promise.race([r.it.next(), timeout]);
        if (n === 'timeout') return none(`no PMI within ${s.timeoutMs} ms`);
        if (n.done || n.value.kind === 'exit') {
          await this.stop();
          return none('the workload exited without a PMI');
        }
        const ev = n.value;
        if (ev.kind === 'fault') throw ev.error;
        if (ev.kind === 'pmi') {
          this.pmis++;
          return { judged: { what, ok: s.expect === 'pmi', detail: `PMI: GLOBAL_STATUS ${hex(ev.globalStatus)}, STATUS ${hex(ev.status)}` }, pmi: ev };
        }
      }
    } finally {
      clearTimeout(timer);
    }
  }
}
