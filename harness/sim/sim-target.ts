// The reference model as a Target (driver/target.ts): one PT unit (MSR file)
// per logical processor over one physical memory, each with a packet
// generator on its output unit; `start` runs a workload's model on one of them
// (harness/sim/exec/). This is the ONE place the model is composed: `--pt model`
// (harness/hybrid/attach-model.ts) is a SimTarget over borrowed guest RAM, reached
// through this same Target API by a routing target.
import { GeneralProtectionError } from '../../driver/hw/cpu-fault.js';
import { PtError, throwIfAborted } from '../../driver/base/errors.js';
import type { CpuidRegs } from '../../driver/hw/cpuid.js';
import type { CallOpts, Execution, MsrOp, MsrResult, PhysMemory, PhysRegion, StartOpts, Target, Workload } from '../../driver/target.js';
import { CpuTrace, type TraceModelOptions } from './exec/cpu-trace.js';
import { DEFAULT_CR3, Engine } from './exec/engine.js';
import { SimExecution, type TopHalf } from './exec/execution.js';
import { MsrFile } from './msr-file.js';
import { OutputUnit } from './output/output-unit.js';
import type { OutputGuard } from './output/output-guard.js';
import type { SyncPhysMemory } from './output/sync-phys.js';
import type { TopaOptions } from './output/topa.js';
import { SparsePhysMemory, type SparsePhysMemoryOptions } from './phys-memory.js';
import { cpuidOf, getProfile, type CpuProfile, type ProfileName } from './profiles.js';
import { WorkloadModel } from './workload/model.js';
import { xrstors, xsaves, xsavesAreaSize, type XrstorsQuirk } from './xsave.js';
import type { TruthLog } from './trace/truth.js';
import type { ClockConfig } from './trace/clock.js';
import { MemoryOracle, overlaps, span, type OwnedMemory } from './memory-oracle.js';
import { ForeignMemory } from './foreign-owner.js';
import { FROZEN, type Realism } from './realism.js';

/**
 * What the model needs of its physical memory: the driver's allocator and accesses (Target.phys),
 * the output engines' synchronous accesses (output/sync-phys.ts), and a close. SparsePhysMemory is one.
 */
export interface SimPhysMemory extends PhysMemory, SyncPhysMemory, OwnedMemory {
  /** Bytes currently allocated (page-rounded). */
  readonly allocatedBytes: number;
  /** Releases the memory; later accesses fail. */
  close(): void;
}

export interface SimTargetOptions {
  /** A `--cpu` name or a profile object. */
  readonly profile: ProfileName | CpuProfile;
  /** Seed for everything random in the model (recorded in result.json; nothing random yet). */
  readonly seed?: number;
  /** Logical processors, each with its own PT unit. Default 1. */
  readonly cpus?: number;
  /** The sparse memory to create when `phys` is not given. */
  readonly memory?: SparsePhysMemoryOptions;
  /**
   * A memory someone else owns (the qemu target's guest RAM): ToPA tables are read from and trace
   * is written into it, `memory` is ignored, and dispose leaves it open. Default: a new
   * SparsePhysMemory of `memory`, closed on dispose.
   */
  readonly phys?: SimPhysMemory;
  /** ToPA knobs: PMI skid, early-PMI margin on MENTRY=0 CPUs, entry cache (docs/sdm/output.md §4.5–§4.8). */
  readonly topa?: TopaOptions;
  /** Packet generator knobs: truth recording, internal buffer (OVF), clock, libipt compatibility. */
  readonly trace?: TraceModelOptions;
  /** CR3 the workloads run under. Default exec/engine.ts DEFAULT_CR3. */
  readonly cr3?: bigint;
  /** The `description` prefix before the profile name. Default 'sim'. */
  readonly label?: string;
  /** What the PMI's top half does before the driver sees the event (exec/execution.ts TopHalf). Default: nothing. */
  readonly topHalf?: TopHalf;
  /** CPUs another agent already traces on when the model starts, into memory of its own (foreign-owner.ts). */
  readonly foreignOwner?: readonly number[];
  /** How close to a lab machine the model runs (realism.ts). Default FROZEN: the CPU waits for the driver, running the workload only. */
  readonly realism?: Realism;
}

/** An in-process, deterministic PT-capable CPU built from the SDM (docs/design.md "How the model runs"). */
export class SimTarget implements Target {
  readonly description: string;
  readonly profile: CpuProfile;
  readonly seed: number;
  /** The memory the driver allocates from; its `free` asks the memory oracle first (checkFree). */
  readonly phys: SimPhysMemory;
  /** The memory oracle: every access of PT to memory the driver does not own (memory-oracle.ts). */
  readonly oracle = new MemoryOracle();
  private readonly ownsPhys: boolean;
  private readonly units: MsrFile[];
  private readonly outputs: OutputUnit[];
  private readonly traces: CpuTrace[];
  /** The executions of each CPU (more than one only for `thread` starts). */
  private readonly running: Set<SimExecution>[];
  private readonly cr3: bigint | undefined;
  private readonly topHalf: TopHalf | undefined;
  /** How close to a lab machine the model runs. */
  readonly realism: Realism;
  /** The memory of another agent tracing on some CPUs (foreignOwner), if any. */
  private readonly foreign: ForeignMemory | undefined;
  private disposed = false;
  /** A broken XRSTORS order per CPU (negative controls only: knobs.ts). */
  readonly xrstorsQuirk: (XrstorsQuirk | undefined)[] = [];

  private constructor(o: SimTargetOptions) {
    this.profile = typeof o.profile === 'string' ? getProfile(o.profile) : o.profile;
    this.description = `${o.label ?? 'sim'}:${this.profile.name}`;
    this.seed = o.seed ?? 0;
    const cpus = o.cpus ?? 1;
    if (!Number.isSafeInteger(cpus) || cpus < 1) throw new PtError('bad_config', `cpus must be a positive integer, got ${cpus}`);
    this.units = Array.from({ length: cpus }, () => new MsrFile(this.profile));
    this.ownsPhys = o.phys === undefined;
    this.phys = guardedFree(o.phys ?? new SparsePhysMemory(o.memory), (r) => this.checkFree(r));
    this.foreign = o.foreignOwner?.length ? new ForeignMemory() : undefined;
    // What the CPU's output engines reach: the driver's memory, with another agent's laid over it.
    const cpuMemory = this.foreign ? this.foreign.overlay(this.phys) : this.phys;
    const topa: TopaOptions = { ...(this.profile.topaCache ? { topaCache: this.profile.topaCache } : {}), ...o.topa };
    this.outputs = this.units.map((u, cpu) => new OutputUnit(u, cpuMemory, topa, this.guardOf(cpu)));
    this.traces = this.units.map((u, i) => new CpuTrace(u, this.outputs[i]!, o.trace));
    this.running = this.units.map(() => new Set());
    this.cr3 = o.cr3;
    this.topHalf = o.topHalf;
    this.realism = o.realism ?? FROZEN;
    for (const cpu of o.foreignOwner ?? []) this.foreign!.start(this.unit(cpu));
  }

  /** A fresh model CPU in its reset state. */
  static async create(o: SimTargetOptions, opts?: CallOpts): Promise<SimTarget> {
    throwIfAborted(opts?.signal);
    return new SimTarget(o);
  }

  /** The PT unit of `cpu` (for the model's own layers and tests; the driver never sees it). */
  unit(cpu: number): MsrFile {
    const u = this.units[cpu];
    if (!u) throw new PtError('bad_config', `no logical processor ${cpu} (this target has ${this.units.length})`);
    return u;
  }

  /** The output stage of `cpu`: the packet generator's sink (`writeBytes`) and the `written` count. */
  output(cpu: number): OutputUnit {
    this.unit(cpu);
    return this.outputs[cpu]!;
  }

  /** CPUID: the profile's leaves, the APIC ID of `cpu`, the live XSAVES area size. */
  async cpuid(leaf: number, subleaf: number, cpu = 0, opts?: CallOpts): Promise<CpuidRegs> {
    const u = this.enter(cpu, opts);
    const r = cpuidOf(this.profile, leaf, subleaf);
    if ((leaf >>> 0) === 1) return { ...r, ebx: ((cpu & 0xff) << 24) >>> 0 }; // EBX[31:24] initial APIC ID
    if ((leaf >>> 0) === 0xd && subleaf === 1) return { ...r, ebx: xsavesAreaSize(u) }; // live: XCR0 | IA32_XSS
    return r;
  }

  /** RDMSR; throws GeneralProtectionError with the model's rule. */
  async rdmsr(cpu: number, msr: number, opts?: CallOpts): Promise<bigint> {
    const r = this.enter(cpu, opts).read(msr);
    if (!r.ok) throw new GeneralProtectionError(r.fault);
    return r.value;
  }

  /** WRMSR; throws GeneralProtectionError, and a faulting write changes nothing. */
  async wrmsr(cpu: number, msr: number, value: bigint, opts?: CallOpts): Promise<void> {
    const f = this.enter(cpu, opts).write(msr, value);
    if (f) throw new GeneralProtectionError(f);
  }

  /** The ops in order on `cpu`'s PT unit; a #GP is a result and ends the batch (driver/target.ts). */
  async msrBatch(cpu: number, ops: readonly MsrOp[], opts?: CallOpts): Promise<MsrResult[]> {
    const u = this.enter(cpu, opts);
    const out: MsrResult[] = [];
    for (const o of ops) {
      const r = SimTarget.op(u, o);
      out.push(r);
      if (!r.ok) break;
    }
    return out;
  }

  /** One op of a batch as a result (a #GP is data). */
  private static op(u: MsrFile, o: MsrOp): MsrResult {
    if (o.op === 'rdmsr') {
      const r = u.read(o.msr);
      return r.ok ? { ok: true, op: 'rdmsr', msr: o.msr, value: r.value } : { ok: false, op: 'rdmsr', msr: o.msr, fault: r.fault };
    }
    const f = u.write(o.msr, o.value);
    return f ? { ok: false, op: 'wrmsr', msr: o.msr, fault: f } : { ok: true, op: 'wrmsr', msr: o.msr, value: o.value };
  }

  /** Unmasks the LVT performance-monitor entry of `cpu` (docs/sdm/msrs.md §11.1). */
  async pmiEnable(cpu: number, opts?: CallOpts): Promise<void> {
    this.enter(cpu, opts).unmaskPmi();
  }

  /** XSAVES of the PT state (docs/sdm/xsave.md §2); UnsupportedError where the profile lacks IA32_XSS[8]. */
  async xsaves(cpu: number, rfbm: bigint, opts?: CallOpts): Promise<Uint8Array> {
    return xsaves(this.enter(cpu, opts), rfbm);
  }

  /** XRSTORS (docs/sdm/xsave.md §3); throws GeneralProtectionError on #GP. */
  async xrstors(cpu: number, area: Uint8Array, rfbm: bigint, opts?: CallOpts): Promise<void> {
    const f = xrstors(this.enter(cpu, opts), area, rfbm, this.xrstorsQuirk[cpu]);
    if (f) throw new GeneralProtectionError(f);
  }

  /**
   * Runs `workload.model` (a WorkloadModel) on `cpu`. The CPU is in the driver's untraced handler
   * until the first pull and again at every event. One execution per CPU, unless started as a
   * `thread`: then the executions share the CPU, its PT unit and its PMI latch, and the one whose
   * events the driver pulls is the one that runs (each resumes where its own path stopped).
   */
  start(workload: Workload, cpu: number, opts?: StartOpts): Execution {
    this.enter(cpu, opts);
    if (this.running[cpu]!.size > 0 && !opts?.thread) throw new PtError('bad_state', `${this.description}: CPU ${cpu} is already running a workload (start it as a thread to share the CPU)`);
    const model = workload.model;
    const engine = model instanceof WorkloadModel
      ? new Engine(model, this.traces[cpu]!, {
        ...(opts?.sliceBranches !== undefined ? { sliceBranches: opts.sliceBranches } : {}), ...(this.cr3 !== undefined ? { cr3: this.cr3 } : {}),
        otherCode: this.realism.otherCode,
      })
      : new PtError('bad_config', `${this.description}: workload ${workload.name} has no WorkloadModel; the model can only run generated workloads`);
    const ex = new SimExecution(cpu, this.traces[cpu]!, engine, opts?.signal, () => {
      this.running[cpu]!.delete(ex);
    }, this.topHalf, this.realism, opts?.held ?? false);
    this.running[cpu]!.add(ex);
    return ex;
  }

  /** The CR3 the model's workloads run under (SimTargetOptions.cr3, else exec/engine.ts DEFAULT_CR3). */
  cr3Of(cpu: number): bigint {
    this.unit(cpu);
    return this.cr3 ?? DEFAULT_CR3;
  }

  /** True while a workload runs on any CPU. */
  get busy(): boolean {
    return this.running.some((set) => set.size > 0);
  }

  /** truth.jsonl lines of `cpu` since the target was created (empty unless `trace.truth` is set), written out now. */
  truth(cpu: number): readonly string[] {
    return this.truthLog(cpu)?.lines() ?? [];
  }

  /** The modelled clock of `cpu`'s PT unit (its TSC/ART ratio and P1 are the trace's timing facts). */
  clockOf(cpu: number): ClockConfig {
    this.unit(cpu);
    return this.traces[cpu]!.gen.clock.cfg;
  }

  /** The truth records of `cpu` since the target was created, kept as numbers (undefined unless `trace.truth` is set). */
  truthLog(cpu: number): TruthLog | undefined {
    this.unit(cpu);
    return this.traces[cpu]!.gen.truth ?? undefined;
  }

  /** Bytes `cpu` wrote to memory (losses.json `written`). */
  written(cpu: number): number {
    this.unit(cpu);
    return this.traces[cpu]!.written;
  }

  /** Branches retired by the executions running on `cpu` (the trace-off meter's progress count). */
  retiredBranches(cpu: number): number {
    this.unit(cpu);
    let n = 0;
    for (const ex of this.running[cpu]!) n += ex.branches;
    return n;
  }

  /** Bytes `cpu` dropped in its internal buffer (losses.json `dropped`; each drop shows as an OVF). */
  dropped(cpu: number): number {
    this.unit(cpu);
    return this.traces[cpu]!.gen.dropped;
  }

  /** The trace path of `cpu`: generator, PMI latch (model-only API for tests and tools). */
  trace(cpu: number): CpuTrace {
    this.unit(cpu);
    return this.traces[cpu]!;
  }

  /** The memory oracle as the output engines of `cpu` ask it (output/output-guard.ts). */
  guardOf(cpu: number): OutputGuard {
    return {
      // Another agent's memory is its own to trace into; the oracle guards the rest.
      owns: (addr, length) => this.phys.owns(addr, length) || this.foreign?.holds(addr, length) === true,
      corrupt: (kind, addr, length, detail) => this.oracle.report({ kind, cpu, addr, length, detail }),
    };
  }

  /**
   * The memory oracle's free check (docs/design.md "The memory oracle"): `region` is about to be
   * given back; a CPU with TraceEn=1 whose tables or regions it overlaps may still write into it,
   * which is a `free-while-tracing` corrupt event. The free itself goes ahead, as on silicon.
   */
  checkFree(region: PhysRegion): void {
    for (const [cpu, out] of this.outputs.entries()) {
      const hit = out.reachable().find((r) => overlaps(r.base, r.size, region.base, region.size));
      if (hit === undefined) continue;
      this.oracle.report({
        kind: 'free-while-tracing', cpu, addr: region.base, length: region.size,
        detail: `${span(region.base, region.size)} was freed while CPU ${cpu} had TraceEn=1 and its ${hit.what} ${span(hit.base, hit.size)} in it`,
      });
    }
  }

  /** The CPUs whose IA32_RTIT_CTL.TraceEn is 1 now, but for another agent's still tracing as it set up (foreignOwner). */
  tracingCpus(): number[] {
    return this.units.flatMap((u, cpu) => (u.traceEn && !(this.foreign && ForeignMemory.stillOwns(u)) ? [cpu] : []));
  }

  /** The CPUs another agent still traces on with its own configuration (foreignOwner). */
  foreignTracing(): number[] {
    return this.foreign ? this.units.flatMap((u, cpu) => (ForeignMemory.stillOwns(u) ? [cpu] : [])) : [];
  }

  /** Another agent's output ring as the CPU wrote it (foreignOwner), or undefined without one. */
  foreignRing(): Uint8Array | undefined {
    return this.foreign?.ring();
  }

  /** Stops every running execution (the CPUs stay in the handler). */
  async stopAll(): Promise<void> {
    for (const set of this.running) for (const ex of [...set]) await ex[Symbol.asyncDispose]();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.stopAll();
    if (this.ownsPhys) this.phys.close();
  }

  /** Lifecycle, signal and CPU-number checks shared by every call. */
  private enter(cpu: number, opts: CallOpts | undefined): MsrFile {
    if (this.disposed) throw new PtError('bad_state', `${this.description} was disposed`);
    throwIfAborted(opts?.signal);
    return this.unit(cpu);
  }
}

/** `phys` with `check` run before every free (the rest is `phys` itself). */
function guardedFree(phys: SimPhysMemory, check: (region: PhysRegion) => void): SimPhysMemory {
  return {
    get maxContiguous(): number { return phys.maxContiguous; },
    get allocatedBytes(): number { return phys.allocatedBytes; },
    alloc: (size, align, opts) => phys.alloc(size, align, opts),
    free: async (region, opts) => { throwIfAborted(opts?.signal); check(region); await phys.free(region, opts); },
    read: (addr, length, opts) => phys.read(addr, length, opts),
    write: (addr, data, opts) => phys.write(addr, data, opts),
    readNow: (addr, length, into) => phys.readNow(addr, length, into),
    writeNow: (addr, data) => phys.writeNow(addr, data),
    owns: (addr, length) => phys.owns(addr, length),
    close: () => phys.close(),
  };
}
