// Which CPU of a shared machine a run traces on (docs/parallel.md "CPUs of one machine"): with
// `--jobs N` against one lab machine every lane is a session of its own to it, and each must own a
// CPU of its own — two lanes on one CPU would each program (and stop) the other's PT and read the
// other's PMIs. Scenarios are written for "the run's CPU", CPU 0; a CpuMapTarget puts that on the
// lane's CPU of the machine.
import { PtError } from '../../driver/base/errors.js';
import { withEvents } from '../../driver/exec-view.js';
import type { CpuidRegs } from '../../driver/hw/cpuid.js';
import type { CallOpts, Execution, MsrOp, MsrResult, PhysMemory, StartOpts, Target, TargetEvent, Workload } from '../../driver/target.js';

/**
 * The CPUs the lanes of one machine use: `given` (`--cpus`, an inventory's `cpus:`) when there is
 * such a list, else every online CPU but CPU 0, where the machine's housekeeping (and whatever it
 * pins there) runs — CPU 0 only on a one-CPU machine. Throws PtError('bad_config') when a CPU given
 * is not online, is given twice, or when there are fewer CPUs than lanes.
 */
export function laneCpus(where: string, online: number, lanes: number, given?: readonly number[]): number[] {
  if (given !== undefined) {
    const bad = given.find((c) => !Number.isSafeInteger(c) || c < 0 || c >= online);
    if (bad !== undefined) throw new PtError('bad_config', `CPU ${bad} is not online on ${where} (CPUs 0-${online - 1})`);
    if (new Set(given).size !== given.length) throw new PtError('bad_config', `--cpus names a CPU twice (${given.join(',')})`);
  }
  const usable = given ?? (online > 1 ? Array.from({ length: online - 1 }, (_, i) => i + 1) : [0]);
  if (lanes > usable.length) {
    throw new PtError('bad_config', `--jobs ${lanes} on ${where} needs ${lanes} CPUs of its own, one per lane; ${given ? `--cpus gives ${usable.length}` : `it has ${online} online and CPU 0 is left to the system`}: ${given ? 'name more with --cpus' : 'lower --jobs, or name the CPUs with --cpus'}`);
  }
  return usable.slice(0, lanes);
}

/** `inner` with the run's CPU 0 on the machine's CPU `cpu`, and that CPU on 0 (a swap, so every CPU keeps one name). */
export class CpuMapTarget implements Target {
  readonly phys: PhysMemory;

  constructor(readonly inner: Target, readonly cpu: number) {
    if (!Number.isSafeInteger(cpu) || cpu < 0) throw new PtError('bad_config', `CPU ${cpu} is not a CPU number`);
    this.phys = inner.phys;
  }

  get description(): string { return `${this.inner.description} CPU ${this.cpu}`; }

  /** The machine's CPU for the run's `c`. */
  private to(c: number): number {
    return c === 0 ? this.cpu : c === this.cpu ? 0 : c;
  }

  cpuid(leaf: number, subleaf: number, cpu = 0, opts?: CallOpts): Promise<CpuidRegs> {
    return this.inner.cpuid(leaf, subleaf, this.to(cpu), opts);
  }

  rdmsr(cpu: number, msr: number, opts?: CallOpts): Promise<bigint> {
    return this.inner.rdmsr(this.to(cpu), msr, opts);
  }

  wrmsr(cpu: number, msr: number, value: bigint, opts?: CallOpts): Promise<void> {
    return this.inner.wrmsr(this.to(cpu), msr, value, opts);
  }

  msrBatch(cpu: number, ops: readonly MsrOp[], opts?: CallOpts): Promise<MsrResult[]> {
    return this.inner.msrBatch(this.to(cpu), ops, opts);
  }

  pmiEnable(cpu: number, opts?: CallOpts): Promise<void> {
    return this.inner.pmiEnable(this.to(cpu), opts);
  }

  xsaves(cpu: number, rfbm: bigint, opts?: CallOpts): Promise<Uint8Array> {
    return this.inner.xsaves(this.to(cpu), rfbm, opts);
  }

  xrstors(cpu: number, area: Uint8Array, rfbm: bigint, opts?: CallOpts): Promise<void> {
    return this.inner.xrstors(this.to(cpu), area, rfbm, opts);
  }

  /** Runs on the machine's CPU; its events name the run's CPU. */
  start(workload: Workload, cpu: number, opts?: StartOpts): Execution {
    const exec = this.inner.start(workload, this.to(cpu), opts);
    const back = (ev: TargetEvent): TargetEvent => ({ ...ev, cpu: this.to(ev.cpu) });
    return withEvents(exec, {
      [Symbol.asyncIterator]: () => {
        const it = exec.events[Symbol.asyncIterator]();
        return {
          next: async () => { const r = await it.next(); return r.done ? r : { done: false, value: back(r.value) }; },
          return: async (v?: unknown) => (it.return ? it.return(v) : { done: true, value: undefined }),
        };
      },
    });
  }

  note(cpu: number, text: string): void {
    this.inner.note?.(this.to(cpu), text);
  }

  cr3Of(cpu: number): bigint | undefined {
    return this.inner.cr3Of?.(this.to(cpu));
  }

  /** A view of one CPU: the machine is its owner's to dispose. */
  async [Symbol.asyncDispose](): Promise<void> {
    // Nothing of its own to stop.
  }
}
