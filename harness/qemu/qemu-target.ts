// A QEMU guest as a Target (docs/design.md "qemu"): MSRs, CPUID, buffers, XSAVES and PMIs through the
// guest module and helper over the virtio-serial channel; physical memory is the module's
// contiguous buffers, read and written by the host directly in the shared guest-RAM file
// (docs/qemu.md §4; QMP `pmemsave` when the file is not shared). `requirePt` refuses a guest
// CPU that does not enumerate PT, judged from CPUID only (harness/link/pt-probe.ts). This target
// knows nothing of the reference model: `--pt model` is composed above it, in harness/hybrid/,
// from this target and a SimTarget whose output engine borrows guest RAM through `guestRamView`.
import { PtError } from '../../driver/base/errors.js';
import type { CallOpts, PhysRegion, ReadOpts } from '../../driver/target.js';
import type { QemuConfig } from './config.js';
import type { TimedOpts } from '../link/deadline.js';
import { physToFileOffset, type RamLayout } from './guest-ram.js';
import type { RamFile } from './ram-file.js';
import { HelperChannel } from '../link/helper-chan.js';
import { badAddress, HelperTarget, type HelperTargetOptions } from '../link/helper-target.js';
import { QemuVm, type LaunchOptions } from './vm.js';

/** How to start a QemuTarget. */
export interface QemuTargetOptions extends LaunchOptions, HelperTargetOptions {
  /** Refuse (UnsupportedError) unless the guest CPU enumerates PT (`--pt hardware`). Default false. */
  readonly requirePt?: boolean;
  /** Bound of the helper connection after boot. Default 30 s. */
  readonly helperTimeoutMs?: number;
}

/**
 * Guest RAM as a component beside the guest may borrow it (harness/hybrid/ lends it to the model's
 * output engine): the shared memory-backend file, where guest-physical addresses sit in it, and
 * which ranges are module buffers. Plain data and one check; it keeps no state of its own.
 */
export interface GuestRamView {
  /** The shared guest-RAM file (GuestRam.ramFile); the VM closes it, never the borrower. */
  readonly file: RamFile;
  /** q35's split of guest RAM around the 4 GiB hole (guest-ram.ts `physToFileOffset`). */
  readonly layout: RamLayout;
  /**
   * True when [addr, addr+length) lies inside one module buffer this target holds now. False for
   * everything once the target is disposing: the file is about to go.
   */
  isModuleBuffer(addr: bigint, length: number): boolean;
}

/** A running QEMU guest driven through its helper; dispose stops the VM. */
export class QemuTarget extends HelperTarget {
  private readonly accel: string;

  private constructor(
    readonly vm: QemuVm, helper: HelperChannel, readonly moduleLoaded: boolean, config: QemuConfig, o: HelperTargetOptions,
    /** Logical processors the guest has (at least 1). */
    readonly cpus: number,
  ) {
    super(helper, o);
    this.accel = config.accel;
  }

  /** `qemu:tcg`, `qemu:kvm`. */
  get description(): string {
    return `qemu:${this.accel}`;
  }

  /** The guest module's NMI handler clears TraceEn at once (launch option `pmiClearsTraceEn`). */
  get nmiClearsTraceEn(): boolean {
    return this.pmiClearsTraceEn;
  }

  /**
   * Guest RAM for a borrower that must reach it synchronously (the model's output engine under
   * `--pt model`), restricted to module buffers so a wrong ToPA entry cannot scribble over the guest
   * kernel. Throws PtError('bad_config') when guest RAM is not a shared file, StateError after dispose.
   */
  guestRamView(): GuestRamView {
    this.enter('guestRamView');
    const file = this.vm.ram.ramFile;
    if (file === undefined) throw new PtError('bad_config', `${this.description}: guest RAM is not shared with the host (a memory-backend file): ${this.vm.ram.slowPathReason}`);
    return {
      file,
      layout: this.vm.ram.layout,
      isModuleBuffer: (addr, length) => this.stateNow === 'running' && this.bufferAt(addr, length) !== undefined,
    };
  }

  /** QEMU's own exit first (it explains the closed helper), then the helper connection's loss. */
  override get lost(): string | undefined {
    const x = this.vm.exit;
    if (this.state === 'running' && x !== undefined) return `QEMU exited (${x.signal !== null ? `killed by ${x.signal}` : `exit code ${x.exitCode}`})`;
    return super.lost;
  }

  /** Boots the guest, connects the helper and (with `requirePt`) checks CPUID for PT. */
  static async launch(config: QemuConfig, opts: QemuTargetOptions = {}): Promise<QemuTarget> {
    const vm = await QemuVm.launch(config, opts);
    const helper = new HelperChannel(vm.paths.helperSocket);
    let t: QemuTarget | undefined;
    try {
      const timed: TimedOpts = { timeoutMs: opts.helperTimeoutMs ?? 30_000, ...(opts.signal === undefined ? {} : { signal: opts.signal }) };
      await helper.connect(timed);
      // A request that times out asks QMP and the agent whether the guest still runs: a stopped
      // QEMU or a hung guest ends the target at once, named "not responding", not run after run.
      helper.watchLiveness(() => vm.whyNotResponding());
      const { module, cpus } = await helper.info(timed);
      const o: HelperTargetOptions = { pmiClearsTraceEn: opts.pmiClearsTraceEn ?? false, allowMsr: opts.allowMsr ?? false };
      t = new QemuTarget(vm, helper, module, config, o, Math.max(1, cpus));
      if (opts.requirePt === true) await t.requirePt(opts);
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

