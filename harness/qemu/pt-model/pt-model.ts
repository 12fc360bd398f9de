// The reference model as the PT unit of a real guest (issue 5 item 6, `--pt model`): a SimTarget
// (harness/sim/sim-target.ts, the one place the model is composed) whose output engines read
// ToPA tables from and write trace into a memory the caller gives — for the qemu target the
// guest-RAM file (guest-ram-sync.ts). The model answers CPUID, the PT MSRs, XSAVES/XRSTORS of
// component 8 and runs workloads; everything else stays the guest's. Allocation is the guest's
// too: the model's memory view refuses to allocate (module buffers come from the qemu target).
import { AllocationError, PtError } from '../../../driver/errors.js';
import type { CpuidRegs } from '../../../driver/hw/cpuid.js';
import type { Execution, MsrOp, MsrResult, PhysRegion, ReadOpts, StartOpts, Workload } from '../../../driver/target.js';
import type { TraceModelOptions } from '../../sim/exec/cpu-trace.js';
import type { MsrFile } from '../../sim/msr-file.js';
import type { SyncPhysMemory } from '../../sim/output/sync-phys.js';
import type { TopaOptions } from '../../sim/output/topa.js';
import type { CpuProfile, ProfileName } from '../../sim/profiles.js';
import { SimTarget, type SimPhysMemory } from '../../sim/sim-target.js';

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

/**
 * Memory the model uses but does not own: synchronous and async accesses go to `mem`; allocation
 * and free are the owner's (PtError), and close leaves `mem` open (its owner closes it).
 */
class BorrowedMemory implements SimPhysMemory {
  readonly maxContiguous = 0;
  readonly allocatedBytes = 0;

  constructor(private readonly mem: SyncPhysMemory) {}

  readNow(addr: bigint, length: number, into?: Uint8Array): Uint8Array {
    return this.mem.readNow(addr, length, into);
  }

  writeNow(addr: bigint, data: Uint8Array): void {
    this.mem.writeNow(addr, data);
  }

  async read(addr: bigint, length: number, opts?: ReadOpts): Promise<Uint8Array> {
    return this.mem.readNow(addr, length, opts?.into);
  }

  async write(addr: bigint, data: Uint8Array): Promise<void> {
    this.mem.writeNow(addr, data);
  }

  async alloc(size: number, align: number): Promise<PhysRegion> {
    throw new AllocationError(size, align, 0, 'the model\'s memory is the guest\'s: allocate module buffers through the qemu target');
  }

  async free(region: PhysRegion): Promise<void> {
    throw new PtError('bad_address', `0x${region.base.toString(16)} was not allocated by the model (module buffers are the qemu target's)`);
  }

  close(): void {
    // The owner (QemuTarget) closes the guest-RAM file.
  }
}

/** The model's PT units for `cpus` logical processors over `phys`. */
export class PtModel {
  /** The model itself: a SimTarget over `phys` (its truth, written and dropped counts, model-only API). */
  readonly sim: SimTarget;

  constructor(phys: SyncPhysMemory, cpus: number, o: PtModelOptions = {}) {
    if (!Number.isSafeInteger(cpus) || cpus < 1) throw new PtError('bad_config', `cpus must be a positive integer, got ${cpus}`);
    this.sim = SimTarget.createNow({
      profile: o.profile ?? 'skylake', cpus, phys: new BorrowedMemory(phys), label: 'model',
      ...(o.seed === undefined ? {} : { seed: o.seed }),
      ...(o.topa === undefined ? {} : { topa: o.topa }),
      ...(o.trace === undefined ? {} : { trace: o.trace }),
      ...(o.cr3 === undefined ? {} : { cr3: o.cr3 }),
    });
  }

  /** The CPU profile the model implements. */
  get profile(): CpuProfile {
    return this.sim.profile;
  }

  /** Recorded with the run, as on SimTarget. */
  get seed(): number {
    return this.sim.seed;
  }

  /** The MSR file of `cpu` (for tests and tools; the driver never sees it). */
  unit(cpu: number): MsrFile {
    return this.sim.unit(cpu);
  }

  /** CPUID as SimTarget answers it: the profile's leaves, the APIC ID, the live XSAVES size. */
  cpuid(leaf: number, subleaf: number, cpu: number): CpuidRegs {
    return this.sim.cpuidNow(leaf, subleaf, cpu);
  }

  /** RDMSR; throws GeneralProtectionError with the model's rule. */
  rdmsr(cpu: number, msr: number): bigint {
    return this.sim.rdmsrNow(cpu, msr);
  }

  /** WRMSR; throws GeneralProtectionError, and a faulting write changes nothing. */
  wrmsr(cpu: number, msr: number, value: bigint): void {
    this.sim.wrmsrNow(cpu, msr, value);
  }

  /** One op of a batch as a result (a #GP is data). */
  op(cpu: number, o: MsrOp): MsrResult {
    return this.sim.opNow(cpu, o);
  }

  /** Unmasks the model's LVT performance-monitor entry (docs/sdm/msrs.md §11.1). */
  pmiEnable(cpu: number): void {
    this.sim.pmiEnableNow(cpu);
  }

  /** XSAVES of the model's PT state (docs/sdm/xsave.md §2); UnsupportedError where the profile lacks IA32_XSS[8]. */
  xsaves(cpu: number, rfbm: bigint): Uint8Array {
    return this.sim.xsavesNow(cpu, rfbm);
  }

  /** XRSTORS into the model (docs/sdm/xsave.md §3); throws GeneralProtectionError on #GP. */
  xrstors(cpu: number, area: Uint8Array, rfbm: bigint): void {
    this.sim.xrstorsNow(cpu, area, rfbm);
  }

  /** Runs `workload.model` on `cpu` as SimTarget.start does (the guest does not run it); `where` names the target in errors. */
  start(workload: Workload, cpu: number, opts: StartOpts | undefined, where: string): Execution {
    try {
      return this.sim.start(workload, cpu, opts);
    } catch (e) {
      if (e instanceof PtError && e.code === 'bad_state') throw new PtError('bad_state', `${where}: ${e.message}`, { cause: e });
      throw e;
    }
  }

  /** truth.jsonl lines of `cpu` (empty unless `trace.truth` is set). */
  truth(cpu: number): readonly string[] {
    return this.sim.truth(cpu);
  }

  /** Bytes `cpu` wrote to memory (losses.json `written`). */
  written(cpu: number): number {
    return this.sim.written(cpu);
  }

  /** Bytes `cpu` dropped in its internal buffer (losses.json `dropped`). */
  dropped(cpu: number): number {
    return this.sim.dropped(cpu);
  }

  /** True while a workload runs on any CPU. */
  get busy(): boolean {
    return this.sim.busy;
  }

  /** Stops every running execution (the CPUs stay in the handler). */
  async stop(): Promise<void> {
    await this.sim.stopAll();
  }
}
