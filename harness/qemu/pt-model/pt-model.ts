// The reference model as the PT unit of a real guest (issue 5 item 6, `--pt model`): one MSR
// file per logical processor with its output unit and packet generator, composed exactly as
// SimTarget composes them (harness/sim/sim-target.ts), but over a memory the caller gives —
// for the qemu target the guest-RAM file (guest-ram-sync.ts). The model answers CPUID, the PT
// MSRs, XSAVES/XRSTORS of component 8 and runs workloads; everything else stays the guest's.
import { GeneralProtectionError, PtError } from '../../../driver/errors.js';
import type { CpuidRegs } from '../../../driver/hw/cpuid.js';
import type { Execution, MsrOp, MsrResult, StartOpts, Workload } from '../../../driver/target.js';
import { CpuTrace, type TraceModelOptions } from '../../sim/exec/cpu-trace.js';
import { Engine } from '../../sim/exec/engine.js';
import { SimExecution } from '../../sim/exec/execution.js';
import { MsrFile } from '../../sim/msr-file.js';
import { OutputUnit } from '../../sim/output/output-unit.js';
import type { SyncPhysMemory } from '../../sim/output/sync-phys.js';
import type { TopaOptions } from '../../sim/output/topa.js';
import { cpuidOf, getProfile, type CpuProfile, type ProfileName } from '../../sim/profiles.js';
import { WorkloadModel } from '../../sim/workload/model.js';
import { xrstors, xsaves, xsavesAreaSize } from '../../sim/xsave.js';

/** The model's knobs, as SimTargetOptions has them (so a run can match a SimTarget's). */
export interface PtModelOptions {
  /** A `--cpu` name or a profile object. Default 'skylake'. */
  readonly profile?: ProfileName | CpuProfile;
  /** Recorded with the run (nothing in the model is random yet), as on SimTarget. */
  readonly seed?: number;
  readonly topa?: TopaOptions;
  readonly trace?: TraceModelOptions;
  /** CR3 the workloads run under. Default exec/engine.ts DEFAULT_CR3. */
  readonly cr3?: bigint;
}

/** The model's PT units for `cpus` logical processors over `phys`. */
export class PtModel {
  readonly profile: CpuProfile;
  readonly seed: number;
  private readonly units: MsrFile[];
  private readonly traces: CpuTrace[];
  private readonly running: (SimExecution | undefined)[];
  private readonly cr3: bigint | undefined;

  constructor(phys: SyncPhysMemory, cpus: number, o: PtModelOptions = {}) {
    const p = o.profile ?? 'skylake';
    this.profile = typeof p === 'string' ? getProfile(p) : p;
    this.seed = o.seed ?? 0;
    if (!Number.isSafeInteger(cpus) || cpus < 1) throw new PtError('bad_config', `cpus must be a positive integer, got ${cpus}`);
    this.units = Array.from({ length: cpus }, () => new MsrFile(this.profile));
    this.traces = this.units.map((u) => new CpuTrace(u, new OutputUnit(u, phys, o.topa), o.trace));
    this.running = this.units.map(() => undefined);
    this.cr3 = o.cr3;
  }

  /** The MSR file of `cpu` (for tests and tools; the driver never sees it). */
  unit(cpu: number): MsrFile {
    const u = this.units[cpu];
    if (!u) throw new PtError('bad_config', `no logical processor ${cpu} (the model has ${this.units.length})`);
    return u;
  }

  /** CPUID as SimTarget answers it: the profile's leaves, the APIC ID, the live XSAVES size. */
  cpuid(leaf: number, subleaf: number, cpu: number): CpuidRegs {
    const u = this.unit(cpu);
    const r = cpuidOf(this.profile, leaf, subleaf);
    if ((leaf >>> 0) === 1) return { ...r, ebx: ((cpu & 0xff) << 24) >>> 0 }; // EBX[31:24] initial APIC ID
    if ((leaf >>> 0) === 0xd && subleaf === 1) return { ...r, ebx: xsavesAreaSize(u) }; // live: XCR0 | IA32_XSS
    return r;
  }

  /** RDMSR; throws GeneralProtectionError with the model's rule. */
  rdmsr(cpu: number, msr: number): bigint {
    const r = this.unit(cpu).read(msr);
    if (!r.ok) throw new GeneralProtectionError(r.fault);
    return r.value;
  }

  /** WRMSR; throws GeneralProtectionError, and a faulting write changes nothing. */
  wrmsr(cpu: number, msr: number, value: bigint): void {
    const f = this.unit(cpu).write(msr, value);
    if (f) throw new GeneralProtectionError(f);
  }

  /** One op of a batch as a result (a #GP is data). */
  op(cpu: number, o: MsrOp): MsrResult {
    const u = this.unit(cpu);
    if (o.op === 'rdmsr') {
      const r = u.read(o.msr);
      return r.ok ? { ok: true, op: 'rdmsr', msr: o.msr, value: r.value } : { ok: false, op: 'rdmsr', msr: o.msr, fault: r.fault };
    }
    const f = u.write(o.msr, o.value);
    return f ? { ok: false, op: 'wrmsr', msr: o.msr, fault: f } : { ok: true, op: 'wrmsr', msr: o.msr, value: o.value };
  }

  /** Unmasks the model's LVT performance-monitor entry (spec/msrs.md §11.1). */
  pmiEnable(cpu: number): void {
    this.unit(cpu).unmaskPmi();
  }

  /** XSAVES of the model's PT state (spec/xsave.md §2); UnsupportedError where the profile lacks IA32_XSS[8]. */
  xsaves(cpu: number, rfbm: bigint): Uint8Array {
    return xsaves(this.unit(cpu), rfbm);
  }

  /** XRSTORS into the model (spec/xsave.md §3); throws GeneralProtectionError on #GP. */
  xrstors(cpu: number, area: Uint8Array, rfbm: bigint): void {
    const f = xrstors(this.unit(cpu), area, rfbm);
    if (f) throw new GeneralProtectionError(f);
  }

  /** Runs `workload.model` on `cpu` as SimTarget.start does (the guest does not run it). */
  start(workload: Workload, cpu: number, opts: StartOpts | undefined, where: string): Execution {
    this.unit(cpu);
    if (this.running[cpu]) throw new PtError('bad_state', `${where}: CPU ${cpu} is already running a workload`);
    const model = workload.model;
    const engine = model instanceof WorkloadModel
      ? new Engine(model, this.traces[cpu]!, { ...(opts?.sliceBranches !== undefined ? { sliceBranches: opts.sliceBranches } : {}), ...(this.cr3 !== undefined ? { cr3: this.cr3 } : {}) })
      : new PtError('bad_config', `${where}: workload ${workload.name} has no WorkloadModel; the model can only run generated workloads`);
    const ex = new SimExecution(cpu, this.traces[cpu]!, engine, opts?.signal, () => {
      if (this.running[cpu] === ex) this.running[cpu] = undefined;
    });
    this.running[cpu] = ex;
    return ex;
  }

  /** truth.jsonl lines of `cpu` (empty unless `trace.truth` is set). */
  truth(cpu: number): readonly string[] {
    this.unit(cpu);
    return this.traces[cpu]!.gen.truth?.lines() ?? [];
  }

  /** Bytes `cpu` wrote to memory (losses.json `written`). */
  written(cpu: number): number {
    this.unit(cpu);
    return this.traces[cpu]!.written;
  }

  /** Bytes `cpu` dropped in its internal buffer (losses.json `dropped`). */
  dropped(cpu: number): number {
    this.unit(cpu);
    return this.traces[cpu]!.gen.dropped;
  }

  /** True while a workload runs on any CPU. */
  get busy(): boolean {
    return this.running.some((ex) => ex !== undefined);
  }

  /** Stops every running execution (the CPUs stay in the handler). */
  async stop(): Promise<void> {
    for (const ex of this.running) await ex?.[Symbol.asyncDispose]();
  }
}
