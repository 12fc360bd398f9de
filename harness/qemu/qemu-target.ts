// A QEMU guest as a Target (docs/design.md "qemu"): MSRs, CPUID, buffers, XSAVES and PMIs through the
// guest module and helper over the virtio-serial channel; physical memory is the module's
// contiguous buffers, read and written by the host directly in the shared guest-RAM file
// (docs/qemu.md §4; QMP `pmemsave` when the file is not shared). `--pt hardware` refuses a guest
// CPU that does not enumerate PT, judged from CPUID only (pt-probe.ts). `--pt model` attaches the
// reference model as the guest's PT unit (pt-model/): CPUID, the PT MSRs, XSAVES/XRSTORS and
// workload runs go to the model, whose output engine reads ToPA tables from and writes trace into
// the real guest RAM at the module buffers' physical addresses (issue 5 item 6).
import { PtError } from '../../driver/errors.js';
import type { CpuidRegs } from '../../driver/hw/cpuid.js';
import type { CallOpts, Execution, MsrOp, MsrResult, PhysRegion, ReadOpts, StartOpts, Workload } from '../../driver/target.js';
import type { QemuConfig } from './config.js';
import type { TimedOpts } from './deadline.js';
import { physToFileOffset } from './guest-ram.js';
import { HelperChannel } from './helper-chan.js';
import { badAddress, HelperTarget } from './helper-target.js';
import { judgePt, type PtProbe } from './pt-probe.js';
import { GuestRamSync } from './pt-model/guest-ram-sync.js';
import { PtModel, type PtModelOptions } from './pt-model/pt-model.js';
import { isModelMsr, routedBatch } from './pt-model/routing.js';
import { getProfile } from '../sim/profiles.js';
import { QemuVm, type LaunchOptions } from './vm.js';

/**
 * Whose PT unit the driver programs: `hardware` — the guest CPU's, refused (UnsupportedError)
 * unless CPUID enumerates PT; `model` — the reference model attached to the guest.
 */
export type PtMode = 'hardware' | 'model';

/** How to start a QemuTarget. */
export interface QemuTargetOptions extends LaunchOptions, PtModelOptions {
  /** `hardware` implies `requirePt`; `model` attaches the model (profile default 'skylake'). Absent: the raw guest. */
  readonly pt?: PtMode;
  /** Refuse (UnsupportedError) unless the guest CPU enumerates PT. Default false. */
  readonly requirePt?: boolean;
  /** The module's NMI handler clears TraceEn at once (Linux style). Default false. */
  readonly pmiClearsTraceEn?: boolean;
  /** Bound of the helper connection after boot. Default 30 s. */
  readonly helperTimeoutMs?: number;
}

/** A running QEMU guest driven through its helper; dispose stops the VM. */
export class QemuTarget extends HelperTarget {
  private readonly accel: string;

  private model: PtModel | undefined;
  private readonly modelRam: GuestRamSync | undefined;
  private readonly modelCpus: number = 0;
  private modelOpts: PtModelOptions = {};

  private constructor(
    readonly vm: QemuVm, helper: HelperChannel, readonly moduleLoaded: boolean, config: QemuConfig, pmiClearsTraceEn: boolean,
    model?: { readonly cpus: number; readonly opts: PtModelOptions },
  ) {
    super(helper, pmiClearsTraceEn);
    this.accel = config.accel;
    if (model === undefined) return;
    // The model may touch module buffers only: a wrong ToPA entry must not scribble over the guest kernel.
    const file = vm.ram.ramFile;
    if (file === undefined) throw new PtError('bad_config', `--pt model needs guest RAM shared with the host (a memory-backend file): ${vm.ram.slowPathReason}`);
    this.modelRam = new GuestRamSync(file, vm.ram.layout, (addr, len) => this.bufferAt(addr, len) !== undefined);
    this.modelCpus = model.cpus;
    this.modelOpts = model.opts;
    this.model = new PtModel(this.modelRam, model.cpus, model.opts);
  }

  /** `qemu:tcg`, or with the model `qemu:tcg+model:skylake`. */
  get description(): string {
    return this.model === undefined ? `qemu:${this.accel}` : `qemu:${this.accel}+model:${this.model.profile.name}`;
  }

  /** QEMU's own exit first (it explains the closed helper), then the helper connection's loss. */
  override get lost(): string | undefined {
    const x = this.vm.exit;
    if (this.state === 'running' && x !== undefined) return `QEMU exited (${x.signal !== null ? `killed by ${x.signal}` : `exit code ${x.exitCode}`})`;
    return super.lost;
  }

  /** The model attached under `--pt model` (its MSR files, truth, written/dropped counts). */
  get ptModel(): PtModel | undefined {
    return this.model;
  }

  /**
   * Replaces the model by a fresh one in its reset state (what SimTarget.create gives), over the
   * same guest and buffers: one VM can serve several runs that each expect a CPU fresh from reset.
   * `opts` override the launch's model options. Throws PtError('bad_state') without a model
   * or while a workload runs on it.
   */
  async resetModel(opts: PtModelOptions = {}): Promise<PtModel> {
    this.enter('resetModel');
    const old = this.model;
    if (old === undefined || this.modelRam === undefined) throw new PtError('bad_state', `${this.description} has no model attached (launch with pt: 'model')`);
    if (old.busy) throw new PtError('bad_state', `${this.description}: a workload is running on the model`);
    this.modelOpts = { ...this.modelOpts, ...opts };
    this.model = new PtModel(this.modelRam, this.modelCpus, this.modelOpts);
    return this.model;
  }

  /** Boots the guest, connects the helper and (with `requirePt`) checks CPUID for PT. */
  static async launch(config: QemuConfig, opts: QemuTargetOptions = {}): Promise<QemuTarget> {
    const modelOpts = opts.pt === 'model' ? modelOptions(opts) : undefined; // a bad option fails before the boot
    const vm = await QemuVm.launch(config, opts);
    const helper = new HelperChannel(vm.paths.helperSocket);
    let t: QemuTarget | undefined;
    try {
      const timed: TimedOpts = { timeoutMs: opts.helperTimeoutMs ?? 30_000, ...(opts.signal === undefined ? {} : { signal: opts.signal }) };
      await helper.connect(timed);
      const { module, cpus } = await helper.info(timed);
      const model = modelOpts === undefined ? undefined : { cpus: Math.max(1, cpus), opts: modelOpts };
      t = new QemuTarget(vm, helper, module, config, opts.pmiClearsTraceEn ?? false, model);
      if (opts.pt === 'hardware' || opts.requirePt === true) await t.requirePt(opts);
      return t;
    } catch (e) {
      if (t !== undefined) await t.dispose().catch(() => undefined);
      else {
        await helper.close();
        await vm.dispose().catch(() => undefined);
      }
      throw e;
    }
  }

  override async cpuid(leaf: number, subleaf: number, cpu = 0, opts?: CallOpts): Promise<CpuidRegs> {
    if (this.model === undefined) return super.cpuid(leaf, subleaf, cpu, opts);
    this.enter('cpuid', opts);
    return this.model.cpuid(leaf, subleaf, cpu);
  }

  override async rdmsr(cpu: number, msr: number, opts?: CallOpts): Promise<bigint> {
    if (this.model === undefined || !isModelMsr(msr)) return super.rdmsr(cpu, msr, opts);
    this.enter('rdmsr', opts);
    return this.model.rdmsr(cpu, msr);
  }

  override async wrmsr(cpu: number, msr: number, value: bigint, opts?: CallOpts): Promise<void> {
    if (this.model === undefined || !isModelMsr(msr)) return super.wrmsr(cpu, msr, value, opts);
    this.enter('wrmsr', opts);
    this.model.wrmsr(cpu, msr, value);
  }

  /** With the model: runs of PT MSRs go to it, runs of other MSRs to the guest; stops at the first #GP. */
  override async msrBatch(cpu: number, ops: readonly MsrOp[], opts?: CallOpts): Promise<MsrResult[]> {
    const m = this.model;
    if (m === undefined) return super.msrBatch(cpu, ops, opts);
    this.enter('msrBatch', opts);
    return routedBatch(ops, (o) => m.op(cpu, o), (guestOps) => super.msrBatch(cpu, guestOps, opts));
  }

  override async pmiEnable(cpu: number, opts?: CallOpts): Promise<void> {
    if (this.model === undefined) return super.pmiEnable(cpu, opts);
    this.enter('pmiEnable', opts);
    this.model.pmiEnable(cpu);
  }

  override async xsaves(cpu: number, rfbm: bigint, opts?: CallOpts): Promise<Uint8Array> {
    if (this.model === undefined) return super.xsaves(cpu, rfbm, opts);
    this.enter('xsaves', opts);
    return this.model.xsaves(cpu, rfbm);
  }

  override async xrstors(cpu: number, area: Uint8Array, rfbm: bigint, opts?: CallOpts): Promise<void> {
    if (this.model === undefined) return super.xrstors(cpu, area, rfbm, opts);
    this.enter('xrstors', opts);
    this.model.xrstors(cpu, area, rfbm);
  }

  /** With the model: its CPUID decides (the guest's own CPUID is not the PT unit's). */
  override async ptAvailable(opts?: CallOpts): Promise<PtProbe> {
    const m = this.model;
    if (m === undefined) return super.ptAvailable(opts);
    this.enter('ptAvailable', opts);
    const leaf0 = m.cpuid(0, 0, 0);
    return judgePt(leaf0, (leaf0.eax >>> 0) >= 7 ? m.cpuid(7, 0, 0) : undefined);
  }

  /** With the model: runs `workload.model` on the model's CPU (the guest does not run it); PMIs come as on SimTarget. */
  override start(workload: Workload, cpu: number, opts?: StartOpts): Execution {
    if (this.model === undefined) return super.start(workload, cpu, opts);
    this.enter('start', opts);
    return this.model.start(workload, cpu, opts, this.description);
  }

  /** Allocates a module buffer and faults it into the host's mapping of guest RAM, so its first collection is a plain copy. */
  protected override async physAlloc(size: number, align: number, opts?: CallOpts): Promise<PhysRegion> {
    const region = await super.physAlloc(size, align, opts);
    if (this.vm.ram.shared) this.vm.ram.populate(region.base, region.size);
    return region;
  }

  /** Reads guest RAM through the shared file: module buffers, or any other RAM (read only). */
  protected override async physRead(addr: bigint, length: number, opts?: ReadOpts): Promise<Uint8Array> {
    this.enter('phys.read', opts);
    if (physToFileOffset(addr, length, this.vm.ram.layout) === undefined) throw badAddress(addr, length, this.description);
    return this.vm.ram.read(addr, length, opts);
  }

  /** Writes into module buffers through the shared file (the guest sees it at once), else through the helper. */
  protected override async physWrite(addr: bigint, data: Uint8Array, opts?: CallOpts): Promise<void> {
    this.enter('phys.write', opts);
    if (this.bufferAt(addr, data.length) === undefined) throw badAddress(addr, data.length, `${this.description} (writes only inside module buffers)`);
    if (this.vm.ram.shared) await this.vm.ram.write(addr, data);
    else await super.physWrite(addr, data, opts);
  }

  /** Stops the VM (QMP quit, then kill); idempotent. Module buffers die with the guest. */
  async dispose(): Promise<void> {
    if (this.stateNow !== 'running') return;
    this.stateNow = 'disposing';
    try {
      await this.model?.stop();
      this.modelRam?.close(); // before the VM removes the file
      await this.helper.close();
      await this.vm.dispose();
    } finally {
      this.buffers.clear();
      this.stateNow = 'disposed';
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}

/**
 * The model's part of the launch options, checked: a known profile, and no Linux-style NMI
 * handler (`pmiClearsTraceEn` is the guest module's; the model's top half changes nothing, as on
 * SimTarget: harness/sim/exec/execution.ts).
 */
function modelOptions(o: QemuTargetOptions): PtModelOptions {
  if (o.pmiClearsTraceEn === true) throw new PtError('bad_config', '--pt model: pmiClearsTraceEn is a guest-module option; the model\'s PMI top half changes nothing');
  const profile = o.profile ?? 'skylake';
  if (typeof profile === 'string') getProfile(profile);
  return {
    profile,
    ...(o.seed === undefined ? {} : { seed: o.seed }),
    ...(o.topa === undefined ? {} : { topa: o.topa }),
    ...(o.trace === undefined ? {} : { trace: o.trace }),
    ...(o.cr3 === undefined ? {} : { cr3: o.cr3 }),
  };
}
