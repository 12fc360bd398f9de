// A QEMU guest as a Target (DESIGN.md "qemu"): MSRs, CPUID, buffers, XSAVES and PMIs through the
// guest module and helper over the virtio-serial channel; physical memory is the module's
// contiguous buffers, read and written by the host directly in the shared guest-RAM file
// (qemu-notes §4; QMP `pmemsave` when the file is not shared). `--pt hardware` refuses a guest
// CPU that does not enumerate PT, judged from CPUID only (pt-probe.ts).
import type { CallOpts } from '../../driver/target.js';
import type { QemuConfig } from './config.js';
import type { TimedOpts } from './deadline.js';
import { physToFileOffset } from './guest-ram.js';
import { HelperChannel } from './helper-chan.js';
import { badAddress, HelperTarget } from './helper-target.js';
import { QemuVm, type LaunchOptions } from './vm.js';

/** How to start a QemuTarget. */
export interface QemuTargetOptions extends LaunchOptions {
  /** `--pt hardware`: refuse (UnsupportedError) unless the guest CPU enumerates PT. Default false. */
  readonly requirePt?: boolean;
  /** The module's NMI handler clears TraceEn at once (Linux style). Default false. */
  readonly pmiClearsTraceEn?: boolean;
  /** Bound of the helper connection after boot. Default 30 s. */
  readonly helperTimeoutMs?: number;
}

/** A running QEMU guest driven through its helper; dispose stops the VM. */
export class QemuTarget extends HelperTarget {
  readonly description: string;

  private constructor(readonly vm: QemuVm, helper: HelperChannel, readonly moduleLoaded: boolean, config: QemuConfig, pmiClearsTraceEn: boolean) {
    super(helper, pmiClearsTraceEn);
    this.description = `qemu:${config.accel}`;
  }

  /** Boots the guest, connects the helper and (with `requirePt`) checks CPUID for PT. */
  static async launch(config: QemuConfig, opts: QemuTargetOptions = {}): Promise<QemuTarget> {
    const vm = await QemuVm.launch(config, opts);
    const helper = new HelperChannel(vm.paths.helperSocket);
    try {
      const timed: TimedOpts = { timeoutMs: opts.helperTimeoutMs ?? 30_000, ...(opts.signal === undefined ? {} : { signal: opts.signal }) };
      await helper.connect(timed);
      const { module } = await helper.info(timed);
      const t = new QemuTarget(vm, helper, module, config, opts.pmiClearsTraceEn ?? false);
      if (opts.requirePt === true) await t.requirePt(opts);
      return t;
    } catch (e) {
      await helper.close();
      await vm.dispose().catch(() => undefined);
      throw e;
    }
  }

  /** Reads guest RAM through the shared file: module buffers, or any other RAM (read only). */
  protected override async physRead(addr: bigint, length: number, opts?: CallOpts): Promise<Uint8Array> {
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
