// What every run on a suite target is held to, whoever drives it (a scenario, a sequence file, a
// replay): the recorder sits on a CustodyTarget, so whatever the run leaves held is given back at
// its end under docs/design.md "The invariant" (tracing confirmed off, then freed, or left
// allocated and reported); and where a model is the PT unit, its memory oracle writes each corrupt
// event into the transcript where it happened and turns the verdict to `corrupt`
// (docs/design.md "The memory oracle").
import { hex } from '../../driver/base/hex.js';
import { CustodyTarget } from '../../driver/custody.js';
import { RecordingTarget } from '../rundir/recording-target.js';
import { withCorruption, type CorruptRecord, type LeakRecord, type ResultJson } from '../rundir/result.js';
import type { SimTarget } from '../sim/sim-target.js';
import type { RunCpu } from './suite-target.js';

/** One run's custody, recorder and memory oracle. Dispose it when the run's result is written. */
export class RunGuard implements Disposable {
  readonly custody: CustodyTarget;
  /** The run's recorded target: what scenario code and the driver are handed. */
  readonly rec: RecordingTarget;
  private readonly model: SimTarget | undefined;
  private readonly unlisten: (() => void) | undefined;
  /** What was left allocated, from the run's own teardowns and the settle. */
  private leakedNow: LeakRecord[] = [];

  constructor(cpu: Pick<RunCpu, 'target' | 'model'>, clock?: () => number) {
    this.custody = new CustodyTarget(cpu.target);
    this.rec = new RecordingTarget(this.custody, clock);
    this.model = cpu.model;
    this.unlisten = cpu.model?.oracle.listen((e) => this.rec.observe(e.cpu, 'corrupt', { value: e.kind, addr: hex(e.addr), length: e.length, result: e.detail }));
  }

  /**
   * The end of the run, whatever ended it: what it still holds goes back (CustodyTarget.settle,
   * through the recorder, so the transcript shows it). The custody saw every allocation of the run,
   * its driver sessions' too, so what it leaves is the run's whole leak; an allocation whose answer
   * was lost is listed by its size. Returns what was left allocated.
   */
  async settle(): Promise<readonly LeakRecord[]> {
    const settled = await this.custody.settle(this.rec);
    this.leakedNow = [
      ...settled.leaked.map((b) => ({ base: hex(b.region.base), size: b.region.size, role: b.role })),
      ...this.custody.lostAllocations.map((size) => ({ size, role: 'an allocation whose answer was lost (its address is unknown)' })),
    ];
    return this.leakedNow;
  }

  /**
   * What the model holds once the run let go (after `settle`): the CPUs whose TraceEn is still 1
   * and the bytes of its own memory still allocated (none under `--pt model`, whose memory is the
   * guest's). Undefined without a model.
   */
  modelAfter(): { readonly tracing: readonly number[]; readonly allocated: number } | undefined {
    const m = this.model;
    return m ? { tracing: m.tracingCpus(), allocated: m.phys.allocatedBytes } : undefined;
  }

  /** Bytes left allocated (after `settle`). */
  get leakedBytes(): number {
    return this.leakedNow.reduce((n, b) => n + b.size, 0);
  }

  /** `r` with what was leaked and, where a model ran, the oracle's events (verdict `corrupt`). */
  judge(r: ResultJson): ResultJson {
    const withLeaks = this.leakedNow.length ? { ...r, leaked: this.leakedNow } : r;
    const m = this.model;
    return m ? withCorruption(withLeaks, corruptRecords(m), m.oracle.more) : withLeaks;
  }

  [Symbol.dispose](): void {
    this.unlisten?.();
  }
}

/** The memory oracle's events of `model`, as result.json keeps them. */
function corruptRecords(model: SimTarget): CorruptRecord[] {
  return model.oracle.events.map((e) => ({ kind: e.kind, cpu: e.cpu, addr: hex(e.addr), length: e.length, detail: e.detail }));
}
