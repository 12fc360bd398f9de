// `ptlab run --target qemu`: ONE guest for the whole suite (docs/design.md "qemu"). With `--pt model`
// the reference model is the guest's PT unit: every run attaches a fresh one to the suite's guest
// (harness/hybrid/attach-model.ts) with the run's profile, seed, knobs and model settings, so a
// run equals the sim's byte for byte (test/runner/qemu-agreement.test.ts). With `--pt hardware`
// (the default) the guest CPU's own PT is driven, refused when CPUID does not enumerate it (under
// TCG it never does: harness/link/pt-probe.ts); the profile is what the guest's CPUID says.
import { UnsupportedError } from '../../driver/base/errors.js';
import { chooseAccel, probeHostAccel } from '../qemu/accel.js';
import type { QemuConfig } from '../qemu/config.js';
import { findGuestImage, findOnPath, QEMU_BINARY } from '../qemu/images.js';
import { QemuTarget } from '../qemu/qemu-target.js';
import { attachModel } from '../hybrid/attach-model.js';
import type { RoutingTarget } from '../hybrid/routing-target.js';
import { applyKnobs } from '../sim/knobs/knobs.js';
import type { SimTarget } from '../sim/sim-target.js';
import { freeLeftovers, HelperPtSuite } from './helper-suite.js';
import { probedProfile } from './probed-profile.js';
import { RunModelSlot } from './run-model-slot.js';
import { TargetUnavailableError, throwIfInterrupted, type RunCpu, type RunNeeds, type SuiteTarget } from './suite-target.js';
import { runModelOptions, type QemuReach } from './targets.js';

/** Guest RAM of the suite's VM: room for every scenario's buffers (the module hands out ≤ 4 MiB blocks). */
const GUEST_MEMORY_MIB = 256;
/** Bound of boot + helper connection (TCG boots in about 4 s: docs/qemu.md §2). */
const LAUNCH_TIMEOUT_MS = 120_000;

const MODEL_HINT = 'use --pt model to run the reference model as the guest\'s PT unit; `ptlab doctor` shows what this host can run';

/** Boots the suite's guest as `reach` says; TargetUnavailableError when QEMU, the image or PT is missing. */
export async function openQemuSuite(reach: QemuReach, signal?: AbortSignal): Promise<SuiteTarget> {
  if ((await findOnPath(QEMU_BINARY)) === undefined) {
    throw new TargetUnavailableError('qemu', `${QEMU_BINARY} is not installed`, '`ptlab doctor` says what is missing');
  }
  const found = await findGuestImage();
  if ('missing' in found) throw new TargetUnavailableError('qemu', found.missing, 'build it with `npm run images`');
  const choice = chooseAccel(reach.accel, await probeHostAccel());
  const where = `qemu:${choice.accel} (${choice.reason})`;
  const config: QemuConfig = { accel: choice.accel, cpu: choice.cpu, smp: 1, memoryMiB: GUEST_MEMORY_MIB, kernel: found.image.kernel, initrd: found.image.initrd };
  let t: QemuTarget;
  try {
    t = await QemuTarget.launch(config, {
      requirePt: reach.pt === 'hardware', allowMsr: reach.allowMsr === true, timeoutMs: LAUNCH_TIMEOUT_MS, ...(signal ? { signal } : {}),
    });
  } catch (e) {
    throwIfInterrupted(signal, e);
    if (e instanceof UnsupportedError) throw new TargetUnavailableError('qemu', `${where}: ${e.message}`, MODEL_HINT, { cause: e });
    throw new TargetUnavailableError('qemu', `${where}: ${(e as Error).message}`, reach.pt === 'hardware' ? MODEL_HINT : undefined, { cause: e });
  }
  if (reach.pt === 'model') {
    try {
      t.guestRamView(); // the model borrows guest RAM, which must be a file shared with the host: refuse now, not at the first run
    } catch (e) {
      await t.dispose();
      throw new TargetUnavailableError('qemu', `${where}: --pt model: ${(e as Error).message}`, undefined, { cause: e });
    }
  }
  try {
    return reach.pt === 'model' ? new QemuModelSuite(t, `qemu:${choice.accel}+model`) : new HelperPtSuite('qemu', t, await probedProfile(t, signal ? { signal } : {}), { reclaim: reach.reclaim === true });
  } catch (e) {
    await t.dispose();
    throw e;
  }
}


/** `--pt model`: a fresh model per run, attached to the one guest. */
class QemuModelSuite implements SuiteTarget {
  readonly kind = 'qemu';
  readonly rules = 'sim';
  readonly probed = undefined;
  private readonly held = new RunModelSlot<RoutingTarget<QemuTarget, SimTarget>>();

  /** `description`: "qemu:tcg+model" (each run's profile is its own: RunCpu.description). */
  constructor(private readonly t: QemuTarget, readonly description: string) {}

  lost(): string | undefined {
    return this.t.lost;
  }

  async prepare(run: RunNeeds): Promise<RunCpu> {
    const t = this.t;
    await this.held.clear();
    // The sim's options for the same run (targets.ts createSim), so both write the same bytes.
    const target = await attachModel(t, runModelOptions(run.profile, run.seed, run.knobs, run.settings));
    applyKnobs(target.model, run.knobs, t.cpus);
    this.held.hold(target);
    const before = new Set(t.moduleBuffers().map((b) => b.base));
    return {
      target, model: target.model, description: target.description,
      release: async () => {
        await this.held.release(target);
        await freeLeftovers(t, before);
      },
    };
  }

  /** Stops the run's model first (its runs write into guest RAM), then the VM. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.held.disposeThen(() => this.t.dispose());
  }
}
