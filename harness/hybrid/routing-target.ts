// One Target made of two: a `guest` that runs everything a CPU does, and a
// `model` that is its PT unit. `--pt model` is a RoutingTarget over a QEMU guest and a SimTarget
// (attach-model.ts); the routing itself knows only the Target interface (driver/target.ts), so it
// works over any two targets — the unit tests build it from two SimTargets.
//
// What the model answers: CPUID, the PT unit's MSRs — every IA32_RTIT_* address
// (docs/sdm/msrs.md §1, §2), IA32_PERF_GLOBAL_STATUS with _RESET and _SET (§11), IA32_XSS (§12)
// and the x2APIC LVT performance-monitor entry (§11.1) — pmiEnable, XSAVES/XRSTORS and workload
// runs. Every other MSR, physical memory (allocation is the guest's: module buffers) and notes go
// to the guest — unless the parts say `memory: 'model'`: a guest whose RAM the model cannot reach
// synchronously (a lab machine over SSH, docs/hosts.md "pt: model") lends no memory, and the
// model's own memory is the run's.
import { PtError, throwIfAborted } from '../../driver/base/errors.js';
import type { CpuidRegs } from '../../driver/hw/cpuid.js';
import { X2APIC_LVT_PMI_MSR } from '../../driver/hw/lvt.js';
import { IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET, IA32_XSS, RTIT_MSRS } from '../../driver/hw/msrs.js';
import type { CallOpts, Execution, MsrOp, MsrResult, PhysMemory, PhysRegion, StartOpts, Target, Workload } from '../../driver/target.js';

/** The MSRs of the PT unit, which the model owns. */
const MODEL_MSRS: ReadonlySet<number> = new Set([
  ...RTIT_MSRS.map((m) => m.address),
  IA32_PERF_GLOBAL_STATUS.address, IA32_PERF_GLOBAL_STATUS_RESET.address, IA32_PERF_GLOBAL_STATUS_SET.address,
  IA32_XSS.address, X2APIC_LVT_PMI_MSR,
]);

/** Which of the two targets answers an access. */
export type Owner = 'guest' | 'model';

/** The model owns the PT unit's MSRs; every other MSR is the guest's. */
export function ownerOf(msr: number): Owner {
  return MODEL_MSRS.has(msr) ? 'model' : 'guest';
}

/** Consecutive ops of a batch with one owner. */
export interface BatchRun {
  readonly owner: Owner;
  readonly ops: readonly MsrOp[];
}

/** Splits a batch into runs of consecutive ops with the same owner, in order. */
export function splitBatch(ops: readonly MsrOp[]): BatchRun[] {
  const runs: { owner: Owner; ops: MsrOp[] }[] = [];
  for (const o of ops) {
    const owner = ownerOf(o.msr);
    const last = runs[runs.length - 1];
    if (last?.owner === owner) last.ops.push(o);
    else runs.push({ owner, ops: [o] });
  }
  return runs;
}

/**
 * What `dispose` disposes. The runner keeps ONE VM for a whole suite and builds a fresh model for
 * every run, so its routing targets own the model only (`{ guest: false, model: true }`); a
 * stand-alone target (a test, the Target contract) owns both. A part not owned is left running
 * for its owner to dispose.
 */
export interface RoutingOwnership {
  readonly guest: boolean;
  readonly model: boolean;
}

/** The parts of a RoutingTarget. */
export interface RoutingParts<G extends Target, M extends Target> {
  /** Everything but the PT unit: the other MSRs, physical memory (unless `memory: 'model'`), notes. */
  readonly guest: G;
  /** The PT unit: CPUID, PT MSRs, pmiEnable, XSAVES/XRSTORS, workload runs. Its description names it (`model:skylake`). */
  readonly model: M;
  readonly owns: RoutingOwnership;
  /** Whose physical memory the run uses (alloc, free, read, write). Default 'guest'. */
  readonly memory?: Owner;
  /**
   * Told of every free before it reaches the memory's owner: the model's memory oracle, which must
   * see a free of guest memory its PT unit may still write (SimTarget.checkFree).
   */
  readonly beforeFree?: (region: PhysRegion) => void;
}

/** A Target whose PT unit is `model` and whose everything else is `guest` (see the file comment). */
export class RoutingTarget<G extends Target = Target, M extends Target = Target> implements Target {
  readonly guest: G;
  readonly model: M;
  readonly owns: RoutingOwnership;
  /** Whose physical memory `phys` is. */
  readonly memory: Owner;
  readonly phys: PhysMemory;
  private disposed = false;

  constructor(parts: RoutingParts<G, M>) {
    this.guest = parts.guest;
    this.model = parts.model;
    this.owns = parts.owns;
    this.memory = parts.memory ?? 'guest';
    const mem: Target = this[this.memory];
    this.phys = {
      get maxContiguous(): number { return mem.phys.maxContiguous; },
      alloc: async (size, align, opts) => { this.enter(opts); return mem.phys.alloc(size, align, opts); },
      free: async (region, opts) => { this.enter(opts); parts.beforeFree?.(region); return mem.phys.free(region, opts); },
      read: async (addr, length, opts) => { this.enter(opts); return mem.phys.read(addr, length, opts); },
      write: async (addr, data, opts) => { this.enter(opts); return mem.phys.write(addr, data, opts); },
    };
  }

  /** The guest's description with the model's: `qemu:tcg+model:skylake`. */
  get description(): string {
    return `${this.guest.description}+${this.model.description}`;
  }

  async cpuid(leaf: number, subleaf: number, cpu = 0, opts?: CallOpts): Promise<CpuidRegs> {
    this.enter(opts);
    return this.model.cpuid(leaf, subleaf, cpu, opts);
  }

  async rdmsr(cpu: number, msr: number, opts?: CallOpts): Promise<bigint> {
    this.enter(opts);
    return this.to(msr).rdmsr(cpu, msr, opts);
  }

  async wrmsr(cpu: number, msr: number, value: bigint, opts?: CallOpts): Promise<void> {
    this.enter(opts);
    return this.to(msr).wrmsr(cpu, msr, value, opts);
  }

  /** Each run of ops with one owner is one `msrBatch` of that target, in order; the first #GP ends the batch. */
  async msrBatch(cpu: number, ops: readonly MsrOp[], opts?: CallOpts): Promise<MsrResult[]> {
    this.enter(opts);
    const out: MsrResult[] = [];
    for (const run of splitBatch(ops)) {
      const res = await this[run.owner].msrBatch(cpu, run.ops, opts);
      out.push(...res);
      if (res.some((r) => !r.ok)) break;
    }
    return out;
  }

  async pmiEnable(cpu: number, opts?: CallOpts): Promise<void> {
    this.enter(opts);
    return this.model.pmiEnable(cpu, opts);
  }

  async xsaves(cpu: number, rfbm: bigint, opts?: CallOpts): Promise<Uint8Array> {
    this.enter(opts);
    return this.model.xsaves(cpu, rfbm, opts);
  }

  async xrstors(cpu: number, area: Uint8Array, rfbm: bigint, opts?: CallOpts): Promise<void> {
    this.enter(opts);
    return this.model.xrstors(cpu, area, rfbm, opts);
  }

  /** Runs `workload` on the model's CPU (the guest does not run it); events, PMIs included, are the model's. */
  start(workload: Workload, cpu: number, opts?: StartOpts): Execution {
    this.enter(opts);
    return this.model.start(workload, cpu, opts);
  }

  /** A driver decision, for the guest (a recorder beneath it writes it down). */
  note(cpu: number, text: string): void {
    if (!this.disposed) this.guest.note?.(cpu, text);
  }

  /** The model runs the workloads: their address space is the model's. */
  cr3Of(cpu: number): bigint | undefined {
    return this.model.cr3Of?.(cpu);
  }

  /** Disposes what it owns: the model first (its runs write into the guest's memory), then the guest. Idempotent. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    try {
      if (this.owns.model) await this.model[Symbol.asyncDispose]();
    } finally {
      if (this.owns.guest) await this.guest[Symbol.asyncDispose]();
    }
  }

  private to(msr: number): Target {
    return this[ownerOf(msr)];
  }

  /** Throws PtError('bad_state') after dispose, then PtError('aborted') for an aborted signal. */
  private enter(opts: CallOpts | undefined): void {
    if (this.disposed) throw new PtError('bad_state', `${this.description} was disposed`);
    throwIfAborted(opts?.signal);
  }
}
